"""Page extraction, URL normalisation, scope and indexability: pure functions."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairfetch.audit.extract import extract_page, sketch_similarity
from fairfetch.audit.indexability import has_noindex, indexability
from fairfetch.audit.urls import Scope, normalize, resolve_link

PAGE = b"""<!doctype html><html lang="fr"><head><title>Hello</title>
<meta name="description" content="Desc"><meta name="robots" content="NOINDEX">
<meta property="og:title" content="OG"><link rel="canonical" href="/canon">
<link rel="alternate" hreflang="en" href="https://site.test/en/">
<link rel="stylesheet" href="/s.css"><script src="/app.js"></script>
<script type="application/ld+json">{"ok": true}</script>
<script type="application/ld+json">{broken</script></head>
<body><nav><a href="/n">Nav</a></nav><header><a href="/h">Head</a></header>
<main><h1>One</h1><h3>Skip</h3><p>some words here</p>
<a href="/c#frag" rel="nofollow">Content <b>link</b></a><a href="mailto:x@y.test">m</a>
<a href="javascript:void(0)">j</a><a href="#top">top</a>
<img src="/i.png" width="10"><img src="/j.png" alt=""></main>
<footer><a href="https://other.test/x">Out</a></footer><title>Second</title></body></html>"""


def test_audit_extract_facts() -> None:
    f = extract_page(PAGE, "https://site.test/dir/page")
    assert f.titles == ["Hello", "Second"]
    assert f.title_outside_head
    assert f.descriptions == ["Desc"]
    assert not f.description_outside_head
    assert f.meta_robots == "noindex"
    assert f.canonicals == ["https://site.test/canon"]
    assert f.hreflang == [("en", "https://site.test/en/")]
    assert f.lang == "fr"
    assert f.h1s == ["One"]
    assert f.heading_levels == [1, 3]
    assert (f.jsonld_total, f.jsonld_invalid) == (2, 1)
    assert f.og_title == "OG"
    assert f.og_image == ""
    where = {link.url: (link.where, link.anchor, link.rel) for link in f.links}
    assert where == {
        "https://site.test/n": ("nav", "Nav", ""),
        "https://site.test/h": ("header", "Head", ""),
        "https://site.test/c": ("content", "Content link", "nofollow"),
        "https://other.test/x": ("footer", "Out", ""),
    }
    assert f.skipped == {"mailto": 1, "javascript": 1}
    kinds = {(a.url.rsplit("/", 1)[1], a.kind, a.alt, a.width) for a in f.assets}
    assert kinds == {("s.css", "css", None, None), ("app.js", "js", None, None),
                     ("i.png", "image", None, "10"), ("j.png", "image", "", None)}
    assert f.word_count == 10  # main only; nav/header/footer/script excluded
    assert f.content_hash


def test_audit_extract_never_raises_on_garbage() -> None:
    for body in (b"", b"\x00\xff\xfe", b"<html><a href='http://[bad'>x</a>", b"<<<>>>"):
        extract_page(body, "http://site.test/")


def test_audit_extract_chrome_and_text_of_nested_and_huge_pages() -> None:
    # Chrome nested in chrome is dropped from the text innermost first, and its links keep the
    # region priority (nav before header); a page too big for the byte prefilter (> 2 MB) still
    # finds upper-case chrome and main.
    nested = extract_page(
        b"<body><header><nav><a href='/n'>n</a><script>var x</script></nav></header>"
        b"<main><p>one two</p><footer><template><p>t</p></template>f</footer></main></body>",
        "http://s.test/",
    )
    assert [(link.url, link.where) for link in nested.links] == [("http://s.test/n", "nav")]
    assert nested.word_count == 2
    huge = extract_page(
        b"<BODY><P>" + b"filler " * 400_000 + b"</P><NAV><A HREF='/n'>n</A></NAV>"
        b"<MAIN><P>x y z</P></MAIN></BODY>",
        "http://s.test/",
    )
    assert [(link.url, link.where) for link in huge.links] == [("http://s.test/n", "nav")]
    assert huge.word_count == 3


def test_audit_sketch_similarity() -> None:
    words = " ".join(f"w{i}" for i in range(200))
    a = extract_page(f"<main><p>{words} alpha</p></main>".encode(), "http://s.test/a")
    b = extract_page(f"<main><p>{words} beta</p></main>".encode(), "http://s.test/b")
    c = extract_page(b"<main><p>" + b" ".join(b"v%d" % i for i in range(200)) + b"</p></main>",
                     "http://s.test/c")
    assert sketch_similarity(a.sketch, b.sketch) >= 0.9
    assert sketch_similarity(a.sketch, c.sketch) == 0.0


def _shingles(words: list[str]) -> set[tuple[str, ...]]:
    return set(zip(words, words[1:], words[2:], strict=False))


@pytest.mark.parametrize("shared", [60, 150, 240, 285])
def test_audit_sketch_estimates_jaccard(shared: int) -> None:
    # Two 300-word texts sharing their first ``shared`` words: the sketches' estimate must be
    # near the true Jaccard similarity of their 3-shingle sets (k=32: sd ~0.09; 0.25 is loose
    # enough for any sane hash, and fails for a constant, truncated or unsorted sketch).
    from fairfetch.audit.extract import SKETCH_SIZE, _sketch

    a = [f"w{i}" for i in range(300)]
    b = a[:shared] + [f"x{i}" for i in range(300 - shared)]
    sa, sb = _shingles(a), _shingles(b)
    true = len(sa & sb) / len(sa | sb)
    ka, kb = _sketch(" ".join(a)), _sketch(" ".join(b))
    assert len(ka.split()) == len(kb.split()) == SKETCH_SIZE
    assert abs(sketch_similarity(ka, kb) - true) < 0.25


def test_audit_sketch_same_in_every_process() -> None:
    # Sketches written by one crawl process are compared with another's (resume, the writer
    # process): they must not depend on PYTHONHASHSEED, as hash() of str/bytes does.
    import os
    import subprocess
    import sys

    from fairfetch.audit.extract import _sketch

    text = " ".join(f"w{i} la{i % 7}" for i in range(200))
    code = "import sys; from fairfetch.audit.extract import _sketch; print(_sketch(sys.argv[1]))"
    outs = {
        subprocess.run(
            [sys.executable, "-c", code, text], capture_output=True, text=True, check=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        ).stdout.strip()
        for seed in ("1", "2")
    }
    assert outs == {_sketch(text)}


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("HTTP://Site.Test:80/a#x", "http://site.test/a"),
        ("https://site.test:443", "https://site.test/"),
        ("http://site.test:8080/p?q=1", "http://site.test:8080/p?q=1"),
        ("mailto:a@b.test", None),
        ("ftp://site.test/", None),
        ("http:///nohost", None),
        ("http://site.test:99999/", None),
    ],
)
def test_audit_normalize(raw: str, expected: str | None) -> None:
    assert normalize(raw) == expected


@pytest.mark.parametrize(
    ("href", "expected"),
    [
        ("/p/1#f", "http://site.test:81/p/1"),
        ("/a/../b", "http://site.test:81/b"),
        ("//other.test/q", "http://other.test/q"),
        ("rel", "http://site.test:81/dir/rel"),
        ("  /spaced ", "http://site.test:81/spaced"),
        ("#only", None),
        ("", None),
    ],
)
def test_audit_resolve_link_fast_and_general_paths_agree(href: str, expected: str | None) -> None:
    assert resolve_link("http://site.test:81/dir/page", href) == expected


_HREF_CHARS = "/.#?;=&%:@\\ \t\n\x0b\x0c\xa0\u3000\x85\x00\x1fabAB09-_~"


@given(st.one_of(st.text(alphabet=_HREF_CHARS, max_size=14),
                 st.text(alphabet=_HREF_CHARS, max_size=14).map(lambda h: "/" + h)))
@settings(max_examples=600, deadline=None)
def test_audit_resolve_link_fast_path_equals_general_resolver(href: str) -> None:
    # The general resolver (strip, urljoin, normalize) is the definition; the fast path for
    # absolute paths must never disagree with it, whatever the whitespace or dot segments.
    from urllib.parse import urljoin

    base = "http://site.test:81/dir/page"
    stripped = href.strip()
    if not stripped or stripped.startswith("#"):
        expected = None
    else:
        try:
            expected = normalize(urljoin(base, stripped))
        except ValueError:
            expected = None
    assert resolve_link(base, href, "http://site.test:81") == expected
    assert resolve_link(base, href) == expected


def test_audit_scope_host_and_domain() -> None:
    host = Scope("http://www.site.test:81/")
    assert host.contains("http://www.site.test:81/x")
    assert host.contains("https://www.site.test/x")
    assert not host.contains("http://blog.site.test/")
    assert not host.contains("http://www.site.test.evil.test/")
    domain = Scope("http://www.site.test/", registrable_domain=True)
    assert domain.contains("http://blog.site.test/")
    assert domain.contains("http://site.test/")
    assert not domain.contains("http://othersite.test/")


@pytest.mark.parametrize(
    ("kw", "expected"),
    [
        ({"status": 200}, (True, "indexable")),
        ({"status": None, "error": "robots"}, (False, "blocked by robots.txt")),
        ({"status": 301}, (False, "redirect 301")),
        ({"status": 404}, (False, "client error 404")),
        ({"status": 503}, (False, "server error 503")),
        ({"status": 200, "content_type": "image/png"}, (False, "not HTML")),
        ({"status": 200, "x_robots_tag": "googlebot: noindex"}, (False, "noindex (X-Robots-Tag)")),
        ({"status": 200, "meta_robots": "none"}, (False, "noindex (meta robots)")),
        ({"status": 200, "canonical": "http://s.test/other"}, (False, "canonicalised elsewhere")),
        ({"status": 200, "canonical": "http://s.test/"}, (True, "indexable")),
    ],
)
def test_audit_indexability(kw: dict, expected: tuple[bool, str]) -> None:
    args = {"url": "http://s.test/", "status": 200, "error": None, "content_type": "text/html",
            "meta_robots": None, "x_robots_tag": None, "canonical": None} | kw
    assert indexability(**args) == expected


def test_audit_noindex_tokens() -> None:
    assert has_noindex("noindex, nofollow")
    assert not has_noindex("nofollow, noarchive")
    assert not has_noindex(None)


def test_audit_sitemap_parsing() -> None:
    from fairfetch.audit.crawler import _parse_sitemap

    urlset = (b'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
              b"<url><loc> http://s.test/a </loc></url><url><loc>http://s.test/b</loc></url>"
              b"</urlset>")
    assert _parse_sitemap(urlset) == ("urlset", ["http://s.test/a", "http://s.test/b"])
    index = b"<sitemapindex><sitemap><loc>http://s.test/s1.xml</loc></sitemap></sitemapindex>"
    assert _parse_sitemap(index) == ("sitemapindex", ["http://s.test/s1.xml"])
    assert _parse_sitemap(b"<html>not a sitemap</html>") == (None, [])
    assert _parse_sitemap(b"") == (None, [])
    bomb = (b'<?xml version="1.0"?><!DOCTYPE u [<!ENTITY a "aaaaaaaaaa">'
            b'<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><urlset><url><loc>&b;</loc></url>'
            b"</urlset>")
    kind, locs = _parse_sitemap(bomb)
    assert kind == "urlset"
    assert all("aaaaaaaaaa" not in loc for loc in locs)  # entities are not expanded


def test_audit_scope_domain_of_an_ip_address_is_the_address() -> None:
    # The PSL read 127.0.0.1 as a name under the suffix "1": its "registrable domain" was
    # "0.1", and every address ending in .0.1 was taken for the audited site.
    scope = Scope("http://127.0.0.1:8080/", registrable_domain=True)
    assert scope.contains("http://127.0.0.1/x")
    assert not scope.contains("http://10.0.0.1/")
    assert not scope.contains("http://192.168.0.1/")


_REGION_TAGS = ("nav", "header", "footer", "aside", "main", "div", "p")


@st.composite
def _chrome_pages(draw: st.DrawFn) -> bytes:
    """Random nestings of chrome regions and links (with and without href)."""

    def element(depth: int) -> str:
        if depth > 3 or draw(st.booleans()):
            href = draw(st.sampled_from(["", " href='/a'", " href='/b'", " href='mailto:x'"]))
            return f"<a{href}>t</a>"
        tag = draw(st.sampled_from(_REGION_TAGS))
        kids = "".join(element(depth + 1) for _ in range(draw(st.integers(0, 3))))
        return f"<{tag}>{kids}</{tag}>"

    return ("<body>" + "".join(element(0) for _ in range(draw(st.integers(1, 4))))
            + "</body>").encode()


@given(_chrome_pages())
@settings(max_examples=300, deadline=None)
def test_audit_link_regions_equal_css_definition(page: bytes) -> None:
    # extract_page finds each link's region by walking the region elements' subtrees; the
    # definition is the CSS query it replaced: the first region (nav, header, footer, aside)
    # whose "a[href]" descendants include the link, else "content".
    from selectolax.lexbor import LexborHTMLParser

    tree = LexborHTMLParser(page)
    region_of: dict[int, str] = {}
    for region in ("nav", "header", "footer", "aside"):
        for node in tree.css(region):
            for a in node.css("a[href]"):
                region_of.setdefault(a.mem_id, region)
    expected = [
        region_of.get(a.mem_id, "content")
        for a in tree.css("a[href]")
        if resolve_link("http://s.test/", a.attributes.get("href") or "")
    ]
    assert [link.where for link in extract_page(page, "http://s.test/").links] == expected


@given(st.lists(st.sampled_from(["a", "b", "c", "dé", "ü", "x1", "日本"]), max_size=60))
@settings(max_examples=300, deadline=None)
def test_audit_sketch_spelling_is_hex_joined_by_spaces(words: list[str]) -> None:
    # The sketch's text (written to crawl files, compared across versions) is the sorted
    # distinct shingle CRCs, at most SKETCH_SIZE, in lower-case hex joined by single spaces.
    import zlib

    from fairfetch.audit.extract import SKETCH_SIZE, _sketch

    text = " ".join(words)
    raw = text.encode().split(b" ")
    crcs = sorted({zlib.crc32(b" ".join(s)) for s in zip(raw, raw[1:], raw[2:], strict=False)})
    expected = " ".join(f"{c:x}" for c in crcs[:SKETCH_SIZE]) if len(raw) >= 3 else ""
    assert _sketch(text) == expected


def test_audit_crawl_process_imports_no_html_parser() -> None:
    # With the writer process (the default on two cores) the crawl process never parses HTML:
    # the parser loads in the writer only (~2.5 MiB less in the crawl process's RSS).
    import subprocess
    import sys

    code = (
        "import sys, fairfetch.audit.crawler, fairfetch.audit.sink; "
        "print(sorted(m for m in sys.modules if m.startswith(('selectolax', "
        "'fairfetch.audit.extract'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_audit_svg_titles_are_not_page_titles() -> None:
    """An inline SVG icon's <title> is its accessible name, not the page's: counting it made
    every page with such icons "multiple titles" and "title outside <head>"."""
    page = (
        b"<!doctype html><html><head><title>The real title of this page</title></head><body>"
        b'<svg viewBox="0 0 10 10"><title>Search</title><g><title>Lens</title></g></svg>'
        b"<p>text</p></body></html>"
    )
    facts = extract_page(page, "http://s.test/")
    assert facts.titles == ["The real title of this page"]
    assert facts.title_outside_head is False
    only_svg = b"<html><head></head><body><svg><title>Menu</title></svg></body></html>"
    assert extract_page(only_svg, "http://s.test/").titles == []
    stray = b"<html><head></head><body><title>In the body</title></body></html>"
    facts = extract_page(stray, "http://s.test/")
    assert facts.titles == ["In the body"]
    assert facts.title_outside_head is True


def test_audit_csp_in_a_meta_tag_counts() -> None:
    """<meta http-equiv="Content-Security-Policy"> in <head> is a policy the browser enforces:
    the page has a CSP (missing-csp fired on it)."""
    from fairfetch.audit.pagerows import Fetched, PageRowBuilder

    def csp_of(html: bytes, headers: dict[str, str] | None = None) -> int:
        builder = PageRowBuilder(Scope("http://s.test/"), {}, {})
        fetched = Fetched("http://s.test/", 200, None, "",
                          {"content-type": "text/html", **(headers or {})}, html, len(html), 0.0)
        (page_row, *_rest) = builder.build(1, fetched).ops[0][1]
        from fairfetch.audit.crawlfile import PAGE_DONE_COLUMNS

        return int(page_row[PAGE_DONE_COLUMNS.index("csp")])

    meta = (b'<html><head><meta http-equiv="Content-Security-Policy" '
            b"content=\"default-src 'self'\"><title>t</title></head><body>x</body></html>")
    assert extract_page(meta, "http://s.test/").csp_meta is True
    assert csp_of(meta) == 1
    plain = b"<html><head><title>t</title></head><body>x</body></html>"
    assert csp_of(plain) == 0
    assert csp_of(plain, {"content-security-policy": "default-src 'self'"}) == 1
    in_body = (b'<html><head><title>t</title></head><body><meta http-equiv="content-security-'
               b"policy\" content=\"default-src 'self'\"></body></html>")
    assert csp_of(in_body) == 0  # browsers ignore it outside <head>
    empty = b'<html><head><meta http-equiv="Content-Security-Policy" content=""></head></html>'
    assert csp_of(empty) == 0


def test_audit_gzipped_sitemap_is_read() -> None:
    """sitemap.xml.gz (sitemaps.org allows it) comes as gzip bytes with no Content-Encoding:
    it was "not a sitemap", the sitemap's orphans went unseen and no-sitemap fired."""
    import gzip

    from fairfetch.audit.crawler import SITEMAP_MAX_BYTES, _parse_sitemap

    urlset = (b'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
              b"<url><loc>http://s.test/a</loc></url></urlset>")
    assert _parse_sitemap(gzip.compress(urlset)) == ("urlset", ["http://s.test/a"])
    index = b"<sitemapindex><sitemap><loc>http://s.test/s1.xml.gz</loc></sitemap></sitemapindex>"
    assert _parse_sitemap(gzip.compress(index)) == ("sitemapindex", ["http://s.test/s1.xml.gz"])
    # A gzip bomb is not inflated past the protocol's 50 MB, and garbage is no sitemap.
    bomb = gzip.compress(b"<urlset>" + b" " * (SITEMAP_MAX_BYTES + 10) + b"</urlset>")
    assert _parse_sitemap(bomb) == (None, [])
    assert _parse_sitemap(b"\x1f\x8b\x08 not really gzip") == (None, [])


def test_audit_srcset_candidates_and_frames_are_assets() -> None:
    # Responsive variants (img srcset, picture > source srcset) and frames are fetched by every
    # browser: they are status-checked and sized like any resource, so a broken 2x image or a
    # dead embed is found. Variants are resources of type "srcset" (the <img> keeps its one
    # row in Images, so alt and dimension findings are not multiplied by its variants).
    page = (
        b'<html><body><img src="/a.png" alt="a" srcset="/a-1x.png 1x, /a,2x.png 2x,'
        b' https://cdn.test/w_100,h_100/a.png 100w, /a.png 3x">'
        b'<picture><source srcset="/b.webp 1x, /b@2x.webp 2x" type="image/webp">'
        b'<source srcset="  ,, /c.avif  " type="image/avif"><img src="/b.png" alt="b"></picture>'
        b'<img srcset="/only-srcset.png 400w (min-width: 1px), /only-2.png" alt="o">'
        b'<iframe src="/embed/map"></iframe><iframe srcdoc="<p>x</p>"></iframe>'
        b"</body></html>"
    )
    facts = extract_page(page, "http://s.test/p")
    got = [(a.url, a.kind) for a in facts.assets]
    assert ("http://s.test/a.png", "image") in got
    assert ("http://s.test/b.png", "image") in got
    variants = sorted(u for u, k in got if k == "srcset")
    assert variants == sorted([
        "http://s.test/a-1x.png", "http://s.test/a,2x.png", "https://cdn.test/w_100,h_100/a.png",
        "http://s.test/a.png", "http://s.test/b.webp", "http://s.test/b@2x.webp",
        "http://s.test/c.avif", "http://s.test/only-srcset.png", "http://s.test/only-2.png",
    ])
    assert [u for u, k in got if k == "iframe"] == ["http://s.test/embed/map"]


_SRCSET_URL = st.text(
    alphabet=st.characters(blacklist_characters=" \t\n\r\f", blacklist_categories=("Cs",)),
    min_size=1, max_size=12,
).filter(lambda u: not u.startswith(",") and not u.endswith(","))


@given(st.lists(st.tuples(_SRCSET_URL, st.sampled_from(["", " 2x", " 100w", " 1x (a, b)"])),
                max_size=6))
@settings(max_examples=300, deadline=None)
def test_audit_srcset_urls_reads_back_what_was_written(candidates: list) -> None:
    from fairfetch.audit.extract import srcset_urls

    written = ", ".join(url + desc for url, desc in candidates)
    assert srcset_urls(written) == [url for url, _ in candidates]


@given(
    st.lists(st.text(alphabet="abcdefghij", min_size=1, max_size=3), min_size=130, max_size=400)
)
@settings(max_examples=200, deadline=None)
def test_audit_sketch_of_a_long_text_keeps_the_smallest_crcs(words: list[str]) -> None:
    # Past 4 * SKETCH_SIZE shingles only the hashes under a cut are sorted: the sketch must
    # still be the SKETCH_SIZE smallest of them all.
    import zlib

    from fairfetch.audit.extract import SKETCH_SIZE, _sketch

    raw = " ".join(words).encode().split(b" ")
    crcs = sorted({zlib.crc32(b" ".join(s)) for s in zip(raw, raw[1:], raw[2:], strict=False)})
    assert _sketch(" ".join(words)) == " ".join(f"{c:x}" for c in crcs[:SKETCH_SIZE])


@given(
    st.sets(st.integers(0, 2**32 - 1), max_size=600),
    st.integers(1, 64),
    st.sampled_from([0, 8, 16, 24, 30]),
)
def test_audit_sketch_smallest_is_a_sort_whatever_the_spread(
    hashes: set[int], k: int, shift: int
) -> None:
    # Hashes bunched high (shift) leave fewer than k under the cut: the fallback must give
    # the same answer as sorting them all.
    from fairfetch.audit.sketch import _smallest

    skewed = {h | (2**32 - 2 ** (32 - shift)) if shift else h for h in hashes}
    assert _smallest(list(skewed), k) == sorted(skewed)[:k]


@given(
    st.lists(st.integers(0, 2**32 - 1), max_size=300),
    st.integers(1, 8),
    st.integers(1, 64),
)
def test_audit_sketch_smallest_counts_a_repeated_hash_once(
    hashes: list[int], times: int, k: int
) -> None:
    # A page repeats shingles (a menu, a footer): their hashes come in as often as they occur,
    # and the sketch must hold k distinct values, as a sort of the set of them would.
    from fairfetch.audit.sketch import _smallest

    repeated = hashes * times
    assert _smallest(repeated, k) == sorted(set(repeated))[:k]
