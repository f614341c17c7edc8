"""A 3xx with no usable Location (none, empty, or one no browser can follow) serves no page and
sends nobody anywhere: it is reported (redirect-without-location), and so is a redirect of the
site whose chain ends on it (redirect-to-error). It was flagged by no rule at all."""

from __future__ import annotations

from pathlib import Path

from fairfetch.audit.crawlfile import CrawlFile
from fairfetch.audit.pagerows import Fetched
from fairfetch.audit.rules import CATALOGUE, Thresholds, run_rules
from fairfetch.audit.view import PageRow, load_view

from .conftest import crawl_file_of, good_page, site

S = "http://site.test"
HOME = (
    b"<!doctype html><html lang=en><head><title>Home</title></head><body>"
    b'<a href="/nowhere">a</a><a href="/empty">b</a><a href="/script">c</a>'
    b'<a href="/choices">d</a><a href="/hop">e</a><a href="/fine">f</a></body></html>'
)


def _crawl_file(path: Path) -> CrawlFile:
    html = {"content-type": "text/html"}
    fetched = [
        Fetched(S + "/", 200, None, "", html, HOME, len(HOME), 0.01),
        Fetched(S + "/nowhere", 302, None, "", {}, b"", 0, 0.01),
        Fetched(S + "/empty", 301, None, "", {"location": " "}, b"", 0, 0.01),
        Fetched(S + "/script", 307, None, "", {"location": "javascript:go()"}, b"", 0, 0.01),
        # The fetch engine's own verdict on a 3xx it does not treat as a redirect.
        Fetched(S + "/choices", 300, "http", "300 Multiple Choices", {}, b"", 0, 0.01),
        Fetched(S + "/hop", 301, None, "", {"location": "/nowhere"}, b"", 0, 0.01),
        Fetched(S + "/fine", 301, None, "", {"location": "/"}, b"", 0, 0.01),
    ]
    return crawl_file_of(path, S + "/", fetched)


def test_audit_redirect_without_location_is_reported(tmp_path: Path) -> None:
    cf = _crawl_file(tmp_path / "r.db")
    try:
        errors = dict(cf.conn.execute("SELECT url, error FROM pages").fetchall())
        site_view = load_view(cf.conn)
    finally:
        cf.close()
    # The Response Codes sheet says why (its Error column).
    assert errors[S + "/nowhere"] == "redirect: 302 without a Location header"
    assert errors[S + "/empty"] == "redirect: 301 without a Location header"
    assert errors[S + "/script"] == "redirect: 307 Location 'javascript:go()' cannot be followed"
    assert errors[S + "/choices"] == "http: 300 Multiple Choices"
    assert errors[S + "/hop"] is None
    assert errors[S + "/fine"] is None
    by_rule = run_rules(site_view).by_rule()
    nowhere = {(f.url, f.detail) for f in by_rule["redirect-without-location"]}
    assert nowhere == {
        (S + "/nowhere", "redirect: 302 without a Location header"),
        (S + "/empty", "redirect: 301 without a Location header"),
        (S + "/script", "redirect: 307 Location 'javascript:go()' cannot be followed"),
        (S + "/choices", "http: 300 Multiple Choices"),
    }
    # A redirect whose chain ends on one of them leads nowhere either; one to a page is fine.
    to_error = {(f.url, f.detail) for f in by_rule.get("redirect-to-error", [])}
    assert to_error == {(S + "/hop", S + "/nowhere (302 without a usable Location)")}


def test_audit_redirect_without_location_rule_both_ways() -> None:
    rule = CATALOGUE["redirect-without-location"]
    bare = PageRow(S + "/r", status=303, redirect_to=None)
    assert [(f.url, f.detail) for f in rule.check(site(bare), Thresholds())] == [
        (S + "/r", "303 without a Location header")
    ]
    moved = good_page("/m", status=301, redirect_to=S + "/")
    assert list(rule.check(site(moved, good_page("/x", status=404)), Thresholds())) == []
