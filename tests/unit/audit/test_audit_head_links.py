"""Canonical and hreflang <link>s are judged by their own rules (canonical-to-non-200,
canonical-to-redirect, hreflang-non-200), as Screaming Frog and Sitebulb keep them: not a second
time as "broken internal link" or "internal link to a redirect" (one defect, two or three
findings, and inflated counts on the Overview)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from fairfetch.audit.crawlfile import CrawlFile
from fairfetch.audit.export import export_crawl
from fairfetch.audit.pagerows import Fetched
from fairfetch.audit.rules import run_rules
from fairfetch.audit.view import load_view

from .conftest import crawl_file_of

S = "http://site.test"
HTML = {"content-type": "text/html"}


def _doc(head: str, body: str, title: str) -> bytes:
    return (
        f"<!doctype html><html lang=en><head><title>{title}</title>{head}</head>"
        f"<body>{body}</body></html>"
    ).encode()


# Home names a redirecting canonical and two hreflang alternates that are no 200 page, and
# links (in its body) to other pages only. Page /b links in its body to the page home's
# hreflang names (/gone): that one is a broken link, once, from /b.
HOME = _doc(
    '<link rel="canonical" href="/old">'
    '<link rel="alternate" hreflang="fr" href="/gone">'
    '<link rel="alternate" hreflang="de" href="/moved">'
    '<link rel="alternate" hreflang="x-default" href="/">',
    '<a href="/b">b</a><a href="/x">x</a><a href="/r">r</a>',
    "Home",
)
PAGE_B = _doc('<link rel="canonical" href="/b">', '<a href="/gone">gone</a>', "B")


def _crawl_file(path: Path, *, finished: bool) -> CrawlFile:
    redirect = {"location": "/new"}
    fetched = [
        Fetched(S + "/", 200, None, "", HTML, HOME, len(HOME), 0.01),
        Fetched(S + "/b", 200, None, "", HTML, PAGE_B, len(PAGE_B), 0.01),
        Fetched(S + "/x", 404, None, "", HTML, b"<p>no</p>", 9, 0.01),
        Fetched(S + "/r", 301, None, "", redirect, b"", 0, 0.01),
        Fetched(S + "/old", 301, None, "", redirect, b"", 0, 0.01),
        Fetched(S + "/gone", 404, None, "", HTML, b"<p>no</p>", 9, 0.01),
        Fetched(S + "/moved", 302, None, "", redirect, b"", 0, 0.01),
        Fetched(S + "/new", 200, None, "", HTML, _doc("", "", "New"), 10, 0.01),
    ]
    return crawl_file_of(path, S + "/", fetched, finished=finished)


@pytest.mark.parametrize("finished", [True, False], ids=["finished", "interrupted"])
def test_audit_head_links_are_judged_by_their_own_rules(tmp_path: Path, finished: bool) -> None:
    cf = _crawl_file(tmp_path / "h.db", finished=finished)
    try:
        # The head links are in the crawl file (the Links sheet shows them, Where = head)...
        heads = cf.conn.execute("SELECT COUNT(*) FROM links WHERE location = 'head'").fetchone()
        assert heads[0] == 5
        site = load_view(cf.conn)
    finally:
        cf.close()
    # ...but the link rules count body links only.
    assert site.broken_internal == [(S + "/", S + "/x", 404), (S + "/b", S + "/gone", 404)]
    assert site.links_to_redirects == [(S + "/", S + "/r", 301)]
    found = {(f.rule_id, f.url, f.detail) for f in run_rules(site).findings}
    by_rule: dict[str, set[tuple[str, str]]] = {}
    for rule_id, url, detail in found:
        by_rule.setdefault(rule_id, set()).add((url, detail))
    assert by_rule["broken-internal-link"] == {
        (S + "/", S + "/x (404)"), (S + "/b", S + "/gone (404)")
    }
    assert by_rule["internal-link-to-redirect"] == {(S + "/", S + "/r (301)")}
    # Each head defect is reported once, under its own family.
    assert by_rule["canonical-to-redirect"] == {(S + "/", S + "/old (301)")}
    assert by_rule["hreflang-non-200"] == {
        (S + "/", "fr: " + S + "/gone (404)"), (S + "/", "de: " + S + "/moved (302)")
    }


def test_audit_head_links_not_on_the_broken_links_sheet(tmp_path: Path) -> None:
    """The Broken Links sheet lists what broken-internal-link counts (the canonical and
    hreflang findings are on the Issues sheet under their own rules)."""
    _crawl_file(tmp_path / "h.db", finished=True).close()
    export_crawl(tmp_path / "h.db", csv_dir=tmp_path / "csv")
    with (tmp_path / "csv" / "broken_links.csv").open(encoding="utf-8") as fh:
        rows = list(csv.reader(fh))[1:]
    assert [(r[0], r[1], r[6]) for r in rows] == [
        (S + "/", S + "/x", "content"), (S + "/b", S + "/gone", "content")
    ]
    with (tmp_path / "csv" / "issues.csv").open(encoding="utf-8") as fh:
        issues = {(r[1], r[3]) for r in csv.reader(fh)}
    assert ("hreflang-non-200", S + "/") in issues
    assert ("canonical-to-redirect", S + "/") in issues
