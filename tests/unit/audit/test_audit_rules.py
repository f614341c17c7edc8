"""Every rule, both directions: it fires on the page that has the defect, and stays quiet on the
same site without it."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from fairfetch.audit.rules import CATALOGUE, Thresholds, run_rules
from fairfetch.audit.rules.pixels import text_width_px
from fairfetch.audit.view import ExternalRow, ImageUse, RedirectRow, ResourceRow, SiteView

from .conftest import BASE, good_page, site

U = BASE
Case = tuple[str, Callable[[], SiteView], Callable[[], SiteView], str]

HOME = good_page("/")
A = good_page("/a")
B = good_page("/b")


def _sk(words: str) -> str:
    from fairfetch.audit.extract import _sketch

    return _sketch(" ".join(words.lower().split()))


TEXT = " ".join(f"w{i}" for i in range(300))

CASES: list[Case] = [
    # --- indexability
    ("noindex-meta", lambda: site(good_page("/a", meta_robots="noindex, follow")),
     lambda: site(good_page("/a", meta_robots="index, follow")), U + "/a"),
    ("noindex-header", lambda: site(good_page("/a", x_robots_tag="googlebot: noindex")),
     lambda: site(good_page("/a", x_robots_tag="noarchive")), U + "/a"),
    ("blocked-by-robots", lambda: site(HOME, good_page("/p", status=None, error="robots: ")),
     lambda: site(HOME, good_page("/p")), U + "/p"),
    ("orphan-in-sitemap", lambda: site(HOME, A, inlinks={A.url: 0}),
     lambda: site(HOME, A, inlinks={A.url: 3}), U + "/a"),
    ("too-deep", lambda: site(good_page("/a", depth=9)), lambda: site(good_page("/a", depth=4)),
     U + "/a"),
    ("link-to-crawler-trap",
     lambda: site(A, trap_links=[(A.url, U + "/a/a/a/", "repeated_path_segment")]),
     lambda: site(A), A.url),
    ("non-indexable-in-sitemap",
     lambda: site(good_page("/a", indexable=False, indexability="noindex (meta robots)")),
     lambda: site(good_page("/a", indexable=False, in_sitemap=False)), U + "/a"),
    ("canonicalised", lambda: site(good_page("/a", canonical=U + "/b")), lambda: site(A),
     U + "/a"),
    ("no-sitemap", lambda: site(HOME, sitemaps_ok=0), lambda: site(HOME), U + "/"),
    ("robots-txt-missing", lambda: site(HOME, robots_status=404), lambda: site(HOME), U + "/"),
    ("nofollow-internal-link", lambda: site(A, B, nofollow_internal=[(A.url, B.url)]),
     lambda: site(A, B), A.url),
    ("sitemap-url-not-crawled", lambda: site(A, sitemap_urls={A.url, U + "/ghost"}),
     lambda: site(A), U + "/ghost"),
    # --- http
    ("broken-internal-link", lambda: site(A, broken_internal=[(A.url, U + "/x", 404)]),
     lambda: site(A), A.url),
    ("broken-external-link",
     lambda: site(A, externals=[ExternalRow("http://o.test/x", "link", 404, sources=[A.url])]),
     lambda: site(A, externals=[ExternalRow("http://o.test/x", "link", 200, sources=[A.url])]),
     A.url),
    ("server-error", lambda: site(good_page("/a", status=503)),
     lambda: site(good_page("/a", status=200)), U + "/a"),
    ("client-error", lambda: site(good_page("/a", status=404)),
     lambda: site(good_page("/a", status=301)), U + "/a"),
    ("fetch-failed", lambda: site(good_page("/a", status=None, error="timeout: x")),
     lambda: site(good_page("/a", status=None, error="robots: ")), U + "/a"),
    ("redirect-chain", lambda: site(A, redirects=[RedirectRow(U + "/r", 301, U + "/s", hops=3,
                                                               final_url=A.url)]),
     lambda: site(A, redirects=[RedirectRow(U + "/r", 301, A.url, hops=1)]), U + "/r"),
    ("redirect-loop", lambda: site(A, redirects=[RedirectRow(U + "/r", 301, U + "/s", loop=True)]),
     lambda: site(A, redirects=[RedirectRow(U + "/r", 301, U + "/s")]), U + "/r"),
    ("meta-refresh", lambda: site(A, B, meta_refreshes=[(A.url, B.url, "after 0 s")]),
     lambda: site(A, B), A.url),
    ("redirect-to-error",
     lambda: site(A, redirects=[RedirectRow(U + "/go", 301, "http://shop.test/p", False, 404,
                                            "http://shop.test/p", 404)]),
     lambda: site(A, redirects=[RedirectRow(U + "/go", 301, "http://shop.test/p", False, 200,
                                            "http://shop.test/p", 200)]), U + "/go"),
    ("redirect-without-location", lambda: site(A, good_page("/r", status=302, redirect_to=None)),
     lambda: site(A, good_page("/r", status=302, redirect_to=A.url)), U + "/r"),
    ("redirect-temporary", lambda: site(A, redirects=[RedirectRow(U + "/r", 302, A.url)]),
     lambda: site(A, redirects=[RedirectRow(U + "/r", 308, A.url)]), U + "/r"),
    ("internal-link-to-redirect", lambda: site(A, links_to_redirects=[(A.url, U + "/r", 301)]),
     lambda: site(A), A.url),
    ("slow-response", lambda: site(good_page("/a", response_ms=2500.0)),
     lambda: site(good_page("/a", response_ms=900.0)), U + "/a"),
    ("heavy-page", lambda: site(good_page("/a", size=400_000)),
     lambda: site(good_page("/a", size=100_000)), U + "/a"),
    ("mixed-content", lambda: site(good_page("/a", mixed_content=2)), lambda: site(A), U + "/a"),
    ("no-https", lambda: site(good_page("/a", url="http://site.test/a")), lambda: site(A),
     "http://site.test/a"),
    ("missing-hsts", lambda: site(good_page("/a", hsts=False)), lambda: site(A), U + "/a"),
    ("missing-csp", lambda: site(good_page("/a", csp=False)), lambda: site(A), U + "/a"),
    ("missing-x-content-type-options",
     lambda: site(good_page("/a", x_content_type_options=False)), lambda: site(A), U + "/a"),
    ("external-not-checked",
     lambda: site(A, externals=[ExternalRow("http://o.test/", "link", None,
                                            not_checked="over_cap")]),
     lambda: site(A, externals=[ExternalRow("http://o.test/", "link", 200)]), "http://o.test/"),
    # --- titles
    ("title-missing", lambda: site(good_page("/a", title="  ")), lambda: site(A), U + "/a"),
    ("title-duplicate", lambda: site(A, good_page("/b", title=A.title)), lambda: site(A, B),
     U + "/b"),
    ("title-too-long", lambda: site(good_page("/a", title="x" * 70)),
     lambda: site(good_page("/a", title="x" * 59)), U + "/a"),
    ("title-too-wide", lambda: site(good_page("/a", title="W" * 40)),
     lambda: site(good_page("/a", title="i" * 59)), U + "/a"),
    ("title-too-short", lambda: site(good_page("/a", title="Home")), lambda: site(A), U + "/a"),
    ("title-same-as-h1", lambda: site(good_page("/a", h1=[A.title])), lambda: site(A), U + "/a"),
    ("title-outside-head", lambda: site(good_page("/a", title_outside_head=1)), lambda: site(A),
     U + "/a"),
    ("title-multiple", lambda: site(good_page("/a", title_count=2)), lambda: site(A), U + "/a"),
    ("description-missing", lambda: site(good_page("/a", meta_description=None)),
     lambda: site(A), U + "/a"),
    ("description-duplicate", lambda: site(A, good_page("/b", meta_description=A.meta_description)),
     lambda: site(A, B), U + "/b"),
    ("description-too-long", lambda: site(good_page("/a", meta_description="d" * 160)),
     lambda: site(A), U + "/a"),
    ("description-too-wide", lambda: site(good_page("/a", meta_description="W " * 76)),
     lambda: site(good_page("/a", meta_description="i " * 76)), U + "/a"),
    ("description-too-short", lambda: site(good_page("/a", meta_description="Short.")),
     lambda: site(A), U + "/a"),
    ("description-outside-head", lambda: site(good_page("/a", description_outside_head=1)),
     lambda: site(A), U + "/a"),
    ("description-multiple", lambda: site(good_page("/a", description_count=3)),
     lambda: site(A), U + "/a"),
    # --- headings
    ("h1-missing", lambda: site(good_page("/a", h1=[])), lambda: site(A), U + "/a"),
    ("h1-multiple", lambda: site(good_page("/a", h1=["x", "y"])), lambda: site(A), U + "/a"),
    ("h1-duplicate", lambda: site(A, good_page("/b", h1=A.h1)), lambda: site(A, B), U + "/b"),
    ("heading-levels-skipped", lambda: site(good_page("/a", heading_levels="124")),
     lambda: site(good_page("/a", heading_levels="12323")), U + "/a"),
    # --- canonicals
    ("canonical-missing", lambda: site(good_page("/a", canonical=None)), lambda: site(A),
     U + "/a"),
    ("canonical-multiple", lambda: site(good_page("/a", canonical_count=2)), lambda: site(A),
     U + "/a"),
    ("canonical-to-non-indexable",
     lambda: site(good_page("/a", canonical=U + "/b"),
                  good_page("/b", indexable=False, indexability="noindex (meta robots)")),
     lambda: site(good_page("/a", canonical=U + "/b"), B), U + "/a"),
    ("canonical-to-non-200",
     lambda: site(good_page("/a", canonical=U + "/b"), good_page("/b", status=404)),
     lambda: site(good_page("/a", canonical=U + "/b"), B), U + "/a"),
    ("canonical-to-redirect",
     lambda: site(good_page("/a", canonical=U + "/b"), good_page("/b", status=301)),
     lambda: site(good_page("/a", canonical=U + "/b"), B), U + "/a"),
    # a foreign canonical: judged from its status check (its status is the one after redirects)
    ("canonical-to-non-200",
     lambda: site(good_page("/a", canonical="http://o.test/a"),
                  externals=[ExternalRow("http://o.test/a", "canonical", 410)]),
     lambda: site(good_page("/a", canonical="http://o.test/a"),
                  externals=[ExternalRow("http://o.test/a", "canonical", 200)]), U + "/a"),
    ("canonical-to-redirect",
     lambda: site(good_page("/a", canonical="http://o.test/a"),
                  externals=[ExternalRow("http://o.test/a", "canonical", 200,
                                         final_url="http://o.test/a2")]),
     lambda: site(good_page("/a", canonical="http://o.test/a"),
                  externals=[ExternalRow("http://o.test/a", "canonical", 200,
                                         final_url="http://o.test/a")]), U + "/a"),
    # --- content
    ("thin-content", lambda: site(good_page("/a", word_count=40)), lambda: site(A), U + "/a"),
    ("duplicate-content", lambda: site(A, good_page("/b", content_hash=A.content_hash)),
     lambda: site(A, B), U + "/b"),
    ("near-duplicate-content",
     lambda: site(good_page("/a", sketch=_sk(TEXT + " alpha")),
                  good_page("/b", sketch=_sk(TEXT + " beta"))),
     lambda: site(good_page("/a", sketch=_sk(TEXT)),
                  good_page("/b", sketch=_sk(" ".join(f"v{i}" for i in range(300))))),
     U + "/a"),
    ("lang-missing", lambda: site(good_page("/a", lang="")), lambda: site(A), U + "/a"),
    # --- assets
    ("image-missing-alt",
     lambda: site(A, image_uses=[ImageUse(A.url, U + "/i.png", None, "1", "1")]),
     lambda: site(A, image_uses=[ImageUse(A.url, U + "/i.png", "", "1", "1")]), A.url),
    ("image-missing-dimensions",
     lambda: site(A, image_uses=[ImageUse(A.url, U + "/i.png", "x", None, "1")]),
     lambda: site(A, image_uses=[ImageUse(A.url, U + "/i.png", "x", "1", "1")]), A.url),
    ("heavy-image", lambda: site(A, images=[ResourceRow(U + "/i.jpg", "image", 200, 600_000)]),
     lambda: site(A, images=[ResourceRow(U + "/i.jpg", "image", 200, 60_000)]), U + "/i.jpg"),
    ("broken-image", lambda: site(A, images=[ResourceRow(U + "/i.jpg", "image", 404, 10)]),
     lambda: site(A, images=[ResourceRow(U + "/i.jpg", "image", 200, 10)]), U + "/i.jpg"),
    ("broken-css", lambda: site(A, resources=[ResourceRow(U + "/s.css", "css", 404, 10)]),
     lambda: site(A, resources=[ResourceRow(U + "/s.js", "js", 404, 10)]), U + "/s.css"),
    ("broken-js", lambda: site(A, resources=[ResourceRow(U + "/s.js", "js", 500, 10)]),
     lambda: site(A, resources=[ResourceRow(U + "/s.css", "css", 500, 10)]), U + "/s.js"),
    ("broken-resource",
     lambda: site(A, resources=[ResourceRow(U + "/f.woff2", "font", None, None,
                                            error="connect: refused")]),
     lambda: site(A, resources=[ResourceRow(U + "/f.woff2", "font", 200, None)]),
     U + "/f.woff2"),
    ("heavy-resource",
     lambda: site(A, resources=[ResourceRow(U + "/bundle.js", "js", 200, 921_600, pages=10_000)]),
     lambda: site(A, resources=[ResourceRow(U + "/bundle.js", "js", 200, None, pages=10_000)]),
     U + "/bundle.js"),
    ("resource-size-unknown",
     lambda: site(A, resources=[ResourceRow(U + "/f.woff2", "font", 200, None)]),
     lambda: site(A, resources=[ResourceRow(U + "/f.woff2", "font", 200, 100)]), U + "/f.woff2"),
    # --- hreflang
    ("hreflang-invalid-code",
     lambda: site(good_page("/en", hreflang=[("en-uk", U + "/en")])),
     lambda: site(good_page("/en", hreflang=[("en-gb", U + "/en")])), U + "/en"),
    ("hreflang-non-200",
     lambda: site(good_page("/en", hreflang=[("de", U + "/de")]), good_page("/de", status=404)),
     lambda: site(good_page("/en", hreflang=[("de", U + "/de")]),
                  good_page("/de", hreflang=[("en", U + "/en")])), U + "/en"),
    ("hreflang-non-200",
     lambda: site(good_page("/en", hreflang=[("de", "http://o.test/de")]),
                  externals=[ExternalRow("http://o.test/de", "hreflang", None,
                                         error="connect: refused")]),
     lambda: site(good_page("/en", hreflang=[("de", "http://o.test/de")]),
                  externals=[ExternalRow("http://o.test/de", "hreflang", None,
                                         not_checked="throttled")]), U + "/en"),
    ("hreflang-missing-return",
     lambda: site(good_page("/en", hreflang=[("fr", U + "/fr")]), good_page("/fr")),
     lambda: site(good_page("/en", hreflang=[("fr", U + "/fr")]),
                  good_page("/fr", hreflang=[("en", U + "/en")])), U + "/en"),
    ("hreflang-missing-x-default", lambda: site(good_page("/en", hreflang=[("en", U + "/en")])),
     lambda: site(good_page("/en", hreflang=[("en", U + "/en"), ("x-default", U + "/en")])),
     U + "/en"),
    # --- structured data and social
    ("jsonld-invalid", lambda: site(good_page("/a", jsonld_invalid=1)), lambda: site(A), U + "/a"),
    ("og-title-missing", lambda: site(good_page("/a", og_title="")), lambda: site(A), U + "/a"),
    ("og-image-missing", lambda: site(good_page("/a", og_image=None)), lambda: site(A), U + "/a"),
]  # fmt: skip


def test_audit_rules_every_rule_has_a_case() -> None:
    assert len(CATALOGUE) >= 50
    assert {c[0] for c in CASES} == set(CATALOGUE)


@pytest.mark.parametrize(("rule_id", "bad", "good", "url"), CASES, ids=[c[0] for c in CASES])
def test_audit_rule_fires_and_stays_quiet(
    rule_id: str, bad: Callable[[], SiteView], good: Callable[[], SiteView], url: str
) -> None:
    r = CATALOGUE[rule_id]
    t = Thresholds()
    fired = list(r.check(bad(), t))
    assert url in {f.url for f in fired}, fired
    assert list(r.check(good(), t)) == []


def test_audit_rules_catalogue_entries_are_complete() -> None:
    families = {r.family for r in CATALOGUE.values()}
    assert families == {"indexability", "http", "titles", "headings", "canonicals", "content",
                        "assets", "hreflang", "structured"}
    for r in CATALOGUE.values():
        assert r.severity in ("error", "warning", "notice")
        assert r.explanation
        assert r.fix
        assert r.title


def test_audit_rules_graph_rules_silent_on_a_cut_short_crawl() -> None:
    cut = site(HOME, A, inlinks={A.url: 0}, cut_short="max_pages")
    run = run_rules(cut)
    ids = {f.rule_id for f in run.findings}
    assert "orphan-in-sitemap" not in ids
    assert "too-deep" not in ids
    assert "max_pages" in run.silenced["orphan-in-sitemap"]
    full = run_rules(site(HOME, A, inlinks={A.url: 0}))
    assert "orphan-in-sitemap" in {f.rule_id for f in full.findings}
    assert not full.silenced


def test_audit_rules_thresholds_are_configurable() -> None:
    page = site(good_page("/a", word_count=150))
    assert list(CATALOGUE["thin-content"].check(page, Thresholds()))
    lenient = Thresholds.from_pairs(["thin_words=100"])
    assert not list(CATALOGUE["thin-content"].check(page, lenient))
    with pytest.raises(ValueError):
        Thresholds.from_pairs(["nonsense=1"])


def test_audit_pixel_width_wide_letters_run_out_first() -> None:
    assert text_width_px("W" * 30, 20) > text_width_px("i" * 30, 20) * 3


@pytest.mark.parametrize(
    "error",
    ["perimeter: 127.0.0.2 is loopback", "throttled: 429", "robots: disallowed by robots.txt"],
)
def test_audit_asset_not_checked_is_not_broken(error: str) -> None:
    """An asset the perimeter refused, or whose server throttled us, was never judged."""
    for rule_id, table, typ in (("broken-image", "images", "image"),
                                ("broken-css", "resources", "css"),
                                ("broken-js", "resources", "js"),
                                ("broken-resource", "resources", "font")):
        status = 429 if error.startswith("throttled") else None
        asset = ResourceRow(U + "/x", typ, status, None, error=error)
        assert list(CATALOGUE[rule_id].check(site(A, **{table: [asset]}), Thresholds())) == []
        dead = ResourceRow(U + "/x", typ, None, None, error="connect: refused")
        assert list(CATALOGUE[rule_id].check(site(A, **{table: [dead]}), Thresholds()))


def test_audit_far_end_without_a_page_is_dead() -> None:
    """A chain that never reaches a page (a loop or no answer on the far side) is reported;
    a far end that was not checked, or an internal loop (redirect-loop's), is not."""
    loop = "redirect: redirect loop back to http://shop.test/a"
    link = ExternalRow("http://shop.test/a", "link", 301, loop, sources=[A.url])
    fired = list(CATALOGUE["broken-external-link"].check(site(A, externals=[link]), Thresholds()))
    assert [(f.url, f.detail) for f in fired] == [(A.url, f"http://shop.test/a ({loop})")]
    ok = ExternalRow("http://shop.test/b", "link", 301, None, sources=[A.url])
    fine = site(A, externals=[ok])
    assert list(CATALOGUE["broken-external-link"].check(fine, Thresholds())) == []

    def redirects(*rows: RedirectRow) -> list[str]:
        found = CATALOGUE["redirect-to-error"].check(site(A, redirects=list(rows)), Thresholds())
        return [f.url for f in found]

    dead = "connect: ClientConnectorError: refused"
    assert redirects(
        RedirectRow(U + "/go/loop", 301, "http://shop.test/a", False, 301, "http://shop.test/a",
                    301, far_error=loop),
        RedirectRow(U + "/go/dead", 301, "http://gone.test/", False, None, "http://gone.test/",
                    None, far_error=dead),
        RedirectRow(U + "/go/fine", 301, "http://shop.test/p", False, 200, "http://shop.test/p",
                    200),
        RedirectRow(U + "/go/unchecked", 301, "http://far.test/", False),
        RedirectRow(U + "/x", 301, U + "/y", True, 301, U + "/x", None, loop=True),
    ) == [U + "/go/loop", U + "/go/dead"]


@pytest.mark.parametrize(
    ("pair", "names"),
    [
        ("thin_words=abc", ["thin_words", "'abc'"]),
        ("thin_words", ["'thin_words'", "name=value"]),
        ("thin_words=1.5", ["thin_words", "'1.5'"]),
        ("slow_ms=-5", ["slow_ms", "-5"]),
        ("slow_ms=nan", ["slow_ms", "nan"]),
        ("near_duplicate_similarity=80", ["near_duplicate_similarity", "between 0 and 1"]),
        ("max_depth=-1", ["max_depth", "-1"]),
    ],
)
def test_audit_threshold_bad_values_refused_naming_them(pair: str, names: list[str]) -> None:
    """A threshold a rule can never meet (80 as a similarity, NaN, a negative limit) would
    silence or flood its rule without a word: refused, naming the threshold and the value."""
    with pytest.raises(ValueError) as info:
        Thresholds.from_pairs([pair])
    for name in names:
        assert name in str(info.value)


def test_audit_threshold_good_values_accepted() -> None:
    t = Thresholds.from_pairs(
        ["slow_ms=1e3", "near_duplicate_similarity=0.9", "max_depth=0", "thin-words=150"]
    )
    assert (t.slow_ms, t.near_duplicate_similarity, t.max_depth, t.thin_words) == (
        1000.0, 0.9, 0, 150
    )
