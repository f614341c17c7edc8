"""A page the site kept throttling (429, or 503 + Retry-After, after the crawl's retries) was
not judged: it is no 4xx page, no broken link target, and the link graph is incomplete."""

from __future__ import annotations

import csv
from pathlib import Path

from fairfetch.audit.crawlfile import CrawlFile
from fairfetch.audit.export import export_crawl
from fairfetch.audit.pagerows import Fetched
from fairfetch.audit.rules import run_rules
from fairfetch.audit.view import load_view

from .conftest import crawl_file_of

S = "http://site.test"
HOME = (
    b"<!doctype html><html lang=en><head><title>Home</title></head><body>"
    b'<a href="/busy">busy</a><a href="/gone">gone</a><a href="/later">later</a></body></html>'
)


def _crawl_file(path: Path) -> CrawlFile:
    html = {"content-type": "text/html"}
    fetched = [
        Fetched(S + "/", 200, None, "", html, HOME, len(HOME), 0.01),
        Fetched(S + "/busy", 429, None, "", {"retry-after": "120"}, b"", 0, 0.01),
        Fetched(S + "/gone", 404, None, "", html, b"<p>no</p>", 9, 0.01),
        Fetched(S + "/later", 503, None, "", {"retry-after": "60"}, b"", 0, 0.01),
    ]
    return crawl_file_of(path, S + "/", fetched)


def test_audit_throttled_pages_are_not_judged(tmp_path: Path) -> None:
    cf = _crawl_file(tmp_path / "t.db")
    try:
        errors = dict(cf.conn.execute("SELECT url, error FROM pages").fetchall())
        assert errors[S + "/busy"].startswith("throttled: 429")
        assert errors[S + "/later"].startswith("throttled: 503")
        assert errors[S + "/gone"] is None
        site = load_view(cf.conn)
    finally:
        cf.close()
    run = run_rules(site)
    judged = {(f.rule_id, f.url, f.detail) for f in run.findings}
    assert ("client-error", S + "/gone", "404") in judged
    assert not [j for j in judged if "/busy" in j[1] + j[2] or "/later" in j[1] + j[2]]
    assert {f.url for f in run.findings if f.rule_id == "broken-internal-link"} == {S + "/"}
    assert "throttled" in run.silenced["orphan-in-sitemap"]
    assert not site.complete


def test_audit_throttled_pages_in_the_export(tmp_path: Path) -> None:
    _crawl_file(tmp_path / "t.db").close()
    export_crawl(tmp_path / "t.db", csv_dir=tmp_path / "csv")

    def rows(name: str) -> list[list[str]]:
        with (tmp_path / "csv" / name).open(encoding="utf-8") as fh:
            return list(csv.reader(fh))[1:]

    assert [r[1] for r in rows("broken_links.csv")] == [S + "/gone"]
    assert ["Pages throttled by the site, not judged", "2"] in rows("overview.csv")
    assert "throttled" in rows("orphans.csv")[0][1]


def test_audit_redirect_to_a_throttled_page_is_not_judged(tmp_path: Path) -> None:
    """A redirect whose destination the site kept throttling lands on no verdict either: it
    was 'Redirect to a 4xx/5xx destination (429)'."""
    body = (
        b"<!doctype html><html lang=en><head><title>Home</title></head><body>"
        b'<a href="/go">go</a><a href="/go-gone">gone</a></body></html>'
    )
    fetched = [
        Fetched(S + "/", 200, None, "", {"content-type": "text/html"}, body, len(body), 0.01),
        Fetched(S + "/go", 301, None, "", {"location": "/busy"}, b"", 0, 0.01),
        Fetched(S + "/go-gone", 301, None, "", {"location": "/gone"}, b"", 0, 0.01),
        Fetched(S + "/busy", 429, None, "", {"retry-after": "120"}, b"", 0, 0.01),
        Fetched(S + "/gone", 404, None, "", {}, b"", 0, 0.01),
    ]
    cf = crawl_file_of(tmp_path / "r.db", S + "/", fetched)
    try:
        site = load_view(cf.conn)
    finally:
        cf.close()
    found = {(f.rule_id, f.url) for f in run_rules(site).findings}
    assert ("redirect-to-error", S + "/go-gone") in found
    assert ("redirect-to-error", S + "/go") not in found
