"""A redirect chain or loop is one finding, at the URL it is entered by.

Every URL of a chain is a row of the redirects table (the Redirects sheet lists them all), but
A -> B -> C -> D is one chain: B, reached only through A's redirect, is not a second chain of
two hops, and the loop A -> B -> A is one loop. A URL of the chain that is also linked, listed
in the sitemap or the start URL is an entry of its own (visitors arrive there), and is reported.
"""

from __future__ import annotations

from fairfetch.audit.rules import run_rules
from fairfetch.audit.view import PageRow, RedirectRow

from .conftest import BASE, good_page, site


def _redirect_page(path: str, **changes: object) -> PageRow:
    values: dict = dict(
        url=BASE + path, status=301, content_type=None, source="redirect", in_sitemap=False,
        indexable=False, indexability="redirect 301",
    )  # fmt: skip
    values.update(changes)
    return PageRow(**values)


def _found(view, rule_id: str) -> list[str]:  # type: ignore[no-untyped-def]
    return [f.url for f in run_rules(view).findings if f.rule_id == rule_id]


def test_audit_redirect_chain_is_one_finding_at_its_entry() -> None:
    home = good_page("/")
    a = _redirect_page("/a", source="link")
    b, c = _redirect_page("/b"), _redirect_page("/c")
    d = good_page("/d")
    redirects = [
        RedirectRow(a.url, 301, b.url, to_status=301, final_url=d.url, final_status=200, hops=3),
        RedirectRow(b.url, 301, c.url, to_status=301, final_url=d.url, final_status=200, hops=2),
        RedirectRow(c.url, 301, d.url, to_status=200, final_url=d.url, final_status=200),
    ]
    view = site(home, a, b, c, d, redirects=redirects,
                inlinks={home.url: 1, a.url: 1, d.url: 1})  # fmt: skip
    assert _found(view, "redirect-chain") == [a.url]


def test_audit_redirect_loop_is_one_finding_at_its_entry() -> None:
    home = good_page("/")
    a = _redirect_page("/loop-a", source="link")
    b = _redirect_page("/loop-b")
    redirects = [
        RedirectRow(a.url, 301, b.url, to_status=301, final_url=a.url, final_status=301,
                    hops=2, loop=True),
        RedirectRow(b.url, 301, a.url, to_status=301, final_url=b.url, final_status=301,
                    hops=2, loop=True),
    ]  # fmt: skip
    view = site(home, a, b, redirects=redirects, inlinks={home.url: 1, a.url: 1})
    assert _found(view, "redirect-loop") == [a.url]


def test_audit_a_chain_url_visitors_reach_directly_is_an_entry_of_its_own() -> None:
    home = good_page("/")
    a = _redirect_page("/a", source="link")
    d = good_page("/d")
    # b is linked from a page, c is listed in the sitemap: each is a chain someone enters.
    b = _redirect_page("/b")
    c = _redirect_page("/c", in_sitemap=True)
    e = _redirect_page("/e")
    redirects = [
        RedirectRow(a.url, 301, b.url, final_url=d.url, final_status=200, hops=4),
        RedirectRow(b.url, 301, c.url, final_url=d.url, final_status=200, hops=3),
        RedirectRow(c.url, 301, e.url, final_url=d.url, final_status=200, hops=2),
        RedirectRow(e.url, 301, d.url, to_status=200, final_url=d.url, final_status=200),
    ]
    view = site(home, a, b, c, e, d, redirects=redirects,
                inlinks={home.url: 1, a.url: 1, b.url: 2, d.url: 1})  # fmt: skip
    assert _found(view, "redirect-chain") == [a.url, b.url, c.url]
    # The start URL is an entry whatever else leads to it.
    start = _redirect_page("/start", source="redirect")
    x = _redirect_page("/x")
    redirects = [
        RedirectRow(a.url, 301, start.url, final_url=d.url, final_status=200, hops=3),
        RedirectRow(start.url, 301, x.url, final_url=d.url, final_status=200, hops=2),
        RedirectRow(x.url, 301, d.url, to_status=200, final_url=d.url, final_status=200),
    ]
    view = site(start, a, x, d, redirects=redirects, start_url=start.url,
                inlinks={a.url: 1, d.url: 1})  # fmt: skip
    assert _found(view, "redirect-chain") == [a.url, start.url]


def test_audit_redirect_to_error_is_one_finding_per_chain() -> None:
    home = good_page("/")
    a = _redirect_page("/a", source="link")
    b = _redirect_page("/b")
    gone = good_page("/gone", status=404, indexable=False, indexability="client error 404")
    redirects = [
        RedirectRow(a.url, 301, b.url, to_status=301, final_url=gone.url, final_status=404,
                    hops=2),
        RedirectRow(b.url, 301, gone.url, to_status=404, final_url=gone.url, final_status=404),
    ]  # fmt: skip
    view = site(home, a, b, gone, redirects=redirects, inlinks={home.url: 1, a.url: 1})
    assert _found(view, "redirect-to-error") == [a.url]
    # b linked from a page of its own: two ways in, two findings.
    view = site(home, a, b, gone, redirects=redirects,
                inlinks={home.url: 1, a.url: 1, b.url: 1})  # fmt: skip
    assert _found(view, "redirect-to-error") == [a.url, b.url]
