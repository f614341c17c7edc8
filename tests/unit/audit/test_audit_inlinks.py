"""Inlink counts read from a crawl file (what orphan-in-sitemap judges): pages linking from their
body, each counted once however many times it links, a page's links to itself and head links
(canonical, hreflang) not counted — the same whichever ``links_to`` index the file has: the
covering one a crawl builds now, the one on ``to_url`` alone that older files have, or none (an
interrupted crawl)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fairfetch.audit.pagerows import Fetched
from fairfetch.audit.rules import run_rules
from fairfetch.audit.view import load_view

from .conftest import crawl_file_of

S = "http://site.test"
HTML = {"content-type": "text/html"}


def _doc(head: str, body: str) -> bytes:
    return f"<html lang=en><head><title>t</title>{head}</head><body>{body}</body></html>".encode()


FETCHED = [
    # Home links to /a twice, to /b once, and to itself.
    Fetched(S + "/", 200, None, "", HTML, _doc("", '<a href="/a">1</a><a href="/a">2</a>'
                                           '<a href="/b">b</a><a href="/">me</a>'), 1, 0.01),
    # /a links to itself (twice) and to /b; names /c only as canonical and hreflang (head).
    Fetched(S + "/a", 200, None, "", HTML, _doc(
        '<link rel="canonical" href="/c"><link rel="alternate" hreflang="fr" href="/c">',
        '<a href="/a">me</a><a href="/a#top">me again</a><a href="/b">b</a>'), 1, 0.01),
    # /b links only to itself; /c only to itself: /c is linked from nowhere's body.
    Fetched(S + "/b", 200, None, "", HTML, _doc("", '<a href="/b">me</a>'), 1, 0.01),
    Fetched(S + "/c", 200, None, "", HTML, _doc("", '<a href="/c">me</a>'), 1, 0.01),
]
EXPECTED = {S + "/a": 1, S + "/b": 2}


@pytest.mark.parametrize("index", ["covering", "to_url only", "none"])
def test_audit_inlinks_count_linking_pages_not_self_links_nor_head_links(
    tmp_path: Path, index: str
) -> None:
    cf = crawl_file_of(tmp_path / "c.db", S + "/", FETCHED, finished=index != "none")
    try:
        if index == "to_url only":
            cf.conn.execute("DROP INDEX links_to")
            cf.conn.execute("CREATE INDEX links_to ON links(to_url)")
        columns = [r[2] for r in cf.conn.execute("PRAGMA index_info('links_to')")]
        assert columns == {
            "covering": ["to_url", "internal", "location"], "to_url only": ["to_url"], "none": []
        }[index]
        site = load_view(cf.conn)
    finally:
        cf.close()
    assert site.inlinks == EXPECTED
    if index == "none":
        return  # an interrupted crawl's link graph is not whole: orphan rules stay silent
    # /c is in the sitemap (no page of crawl_file_of's file is: mark it so) -> an orphan.
    for p in site.pages:
        p.in_sitemap = p.url == S + "/c"
    orphans = [f.url for f in run_rules(site).findings if f.rule_id == "orphan-in-sitemap"]
    assert orphans == [S + "/c"]
