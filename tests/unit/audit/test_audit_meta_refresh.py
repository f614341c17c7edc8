"""``<meta http-equiv="refresh" content="0; url=/new">`` is a redirect the browser makes: its
destination is crawled (a page reachable only through one was never found) or status-checked,
and the page is reported (`meta-refresh`), with what its destination answered when it is no
page to land on."""

from __future__ import annotations

from pathlib import Path

import pytest

from fairfetch.audit.extract import extract_page, parse_refresh
from fairfetch.audit.pagerows import Fetched, PageRowBuilder
from fairfetch.audit.rules import run_rules
from fairfetch.audit.urls import Scope
from fairfetch.audit.view import load_view

from .conftest import crawl_file_of

S = "http://site.test"
HTML = {"content-type": "text/html; charset=utf-8"}


@pytest.mark.parametrize(("content", "expected"), [
    ("0; url=/new", (0, "/new")),
    ("0;URL='/new page'", (0, "/new page")),
    ('5 ; url = "http://other.test/x"', (5, "http://other.test/x")),
    ("3, /plain", (3, "/plain")),
    ("1.5; url=/frac", (1, "/frac")),
    ("10", (10, None)),  # reloads itself: no destination
    ("  7  ", (7, None)),
    ("0; url=", (0, None)),
    ("url=/no-time", None),  # no time: not a refresh (the HTML Standard's parsing)
    ("", None),
    ("soon", None),
])
def test_audit_refresh_content_parsed_as_browsers_do(
    content: str, expected: tuple[int, str | None] | None
) -> None:
    assert parse_refresh(content) == expected


def _doc(head: str, body: str = "") -> bytes:
    return f"<html lang=en><head><title>t</title>{head}</head><body>{body}</body></html>".encode()


def test_audit_extract_reads_the_first_refresh_and_resolves_it() -> None:
    facts = extract_page(
        _doc('<meta http-equiv="Refresh" content="0; url=../moved?a=1">'
             '<meta http-equiv="refresh" content="0; url=/second">'),
        S + "/dir/page", "text/html",
    )
    assert (facts.refresh_delay, facts.refresh) == (0, S + "/moved?a=1")
    # A refresh to itself, or one that reloads, leads nowhere else.
    assert extract_page(_doc('<meta http-equiv="refresh" content="30">'), S + "/").refresh is None
    assert extract_page(_doc(""), S + "/").refresh is None


def test_audit_refresh_destination_is_followed_and_checked() -> None:
    builder = PageRowBuilder(Scope(S + "/"), {}, {})
    inside = _doc('<meta http-equiv="refresh" content="0; url=/landing">')
    outside = _doc('<meta http-equiv="refresh" content="2; url=http://shop.test/p">')
    built_in = builder.build(1, Fetched(S + "/a", 200, None, "", HTML, inside, 1, 0.01))
    built_out = builder.build(2, Fetched(S + "/b", 200, None, "", HTML, outside, 1, 0.01))
    links_in = built_in.ops[0][1][1]
    links_out = built_out.ops[0][1][1]
    # The Links sheet's row: no anchor text, so "anchor" says when the browser goes there.
    assert [r[2:] for r in links_in] == [(S + "/landing", "after 0 s", "refresh", 1, "head")]
    assert [r[2:] for r in links_out] == [
        ("http://shop.test/p", "after 2 s", "refresh", 0, "head")
    ]
    assert built_in.probes == []  # an internal destination is crawled as a page
    assert built_out.probes == [("http://shop.test/p", "refresh")]


def test_audit_meta_refresh_rule(tmp_path: Path) -> None:
    refresh = '<meta http-equiv="refresh" content="0; url={}">'
    fetched = [
        Fetched(S + "/", 200, None, "", HTML,
                _doc("", '<a href="/old">old</a><a href="/gone-soon">g</a><a href="/ok">ok</a>'),
                1, 0.01),
        Fetched(S + "/old", 200, None, "", HTML, _doc(refresh.format("/landing")), 1, 0.01),
        Fetched(S + "/gone-soon", 200, None, "", HTML, _doc(refresh.format("/gone")), 1, 0.01),
        Fetched(S + "/ok", 200, None, "", HTML, _doc(""), 1, 0.01),
        Fetched(S + "/landing", 200, None, "", HTML, _doc(""), 1, 0.01),
        Fetched(S + "/gone", 404, None, "", HTML, b"no", 2, 0.01),
    ]
    cf = crawl_file_of(tmp_path / "r.db", S + "/", fetched)
    try:
        site = load_view(cf.conn)
    finally:
        cf.close()
    by_rule = run_rules(site).by_rule()
    assert [(f.url, f.detail) for f in by_rule["meta-refresh"]] == [
        (S + "/old", f"refreshes to {S}/landing after 0 s"),
        (S + "/gone-soon", f"refreshes to {S}/gone after 0 s, which answers 404"),
    ]
    # The destination is not a broken *link* of the page (it is this rule's finding).
    assert "broken-internal-link" not in by_rule
