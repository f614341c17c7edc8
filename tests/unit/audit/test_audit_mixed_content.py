"""mixed-content on the real path from a fetched page to a finding: the row builder counts the
http:// assets of an https page into the crawl file, the view reads them, the rule reports
them. (The testbed serves http only, so no crawl of it can reach this rule: its /mixed page is
an http page, where http assets are no mixed content.)"""

from __future__ import annotations

from pathlib import Path

from fairfetch.audit.crawlfile import CrawlFile
from fairfetch.audit.pagerows import Fetched, PageRowBuilder
from fairfetch.audit.rules import run_rules
from fairfetch.audit.urls import Scope
from fairfetch.audit.view import load_view

HTML = {"content-type": "text/html; charset=utf-8"}
ASSETS = (
    '<link rel="stylesheet" href="http://site.test/s.css">'  # own site, over http
    '<script src="http://cdn.test/a.js"></script>'
    '<script src="//cdn.test/b.js"></script>'  # protocol-relative: https on an https page
    '<link rel="icon" href="/favicon.ico">'
)
BODY = (
    '<img src="HTTP://cdn.test/a.png" alt="a"><img src="http://cdn.test/a.png" alt="again">'
    '<img src="/local.png" alt="local"><video src="http://media.test/v.mp4"></video>'
    '<a href="http://elsewhere.test/">a plain link is navigation, not a loaded asset</a>'
)


def _doc(head: str, body: str) -> bytes:
    return (
        f"<!doctype html><html lang=en><head><title>t</title>{head}</head><body>{body}"
        "</body></html>"
    ).encode()


def _judge(tmp_path: Path, pages: list[tuple[str, bytes]]) -> tuple[dict[str, int], set]:
    start = pages[0][0]
    cf = CrawlFile(tmp_path / "m.db")
    try:
        builder = PageRowBuilder(Scope(start), {}, {})
        ops: list[tuple[str, object]] = []
        for i, (url, body) in enumerate(pages, 1):
            ops.append(("queue", (i, url, 0, 0, "link")))
            ops.extend(builder.build(i, Fetched(url, 200, None, "", HTML, body, len(body),
                                                0.01)).ops)
        cf.write_batch(ops)
        cf.finalize()
        cf.set_meta(start_url=start, finished_at="2026-11-30T00:00:00+00:00", cut_short="")
        stored = dict(cf.conn.execute("SELECT url, mixed_content FROM pages").fetchall())
        site = load_view(cf.conn)
    finally:
        cf.close()
    found = {(f.url, f.detail) for f in run_rules(site).findings if f.rule_id == "mixed-content"}
    return stored, found


def test_audit_mixed_content_on_an_https_page(tmp_path: Path) -> None:
    doc = _doc(ASSETS, BODY)
    clean = _doc('<script src="https://cdn.test/a.js"></script>', '<img src="/a.png" alt="a">')
    stored, found = _judge(tmp_path, [
        ("https://site.test/", doc), ("https://site.test/clean", clean),
    ])
    # s.css, a.js, a.png (once, whatever the case of its scheme), v.mp4.
    assert stored == {"https://site.test/": 4, "https://site.test/clean": 0}
    assert found == {("https://site.test/", "4 http:// assets")}


def test_audit_mixed_content_through_an_http_base(tmp_path: Path) -> None:
    """<base href="http://..."> turns an https page's relative assets into http ones."""
    doc = _doc('<base href="http://site.test/">', '<img src="/a.png" alt="a">')
    stored, found = _judge(tmp_path, [("https://site.test/", doc)])
    assert stored == {"https://site.test/": 1}
    assert found == {("https://site.test/", "1 http:// assets")}


def test_audit_http_page_has_no_mixed_content(tmp_path: Path) -> None:
    """The same assets on an http page are no mixed content (no-https is that page's finding)."""
    stored, found = _judge(tmp_path, [("http://site.test/", _doc(ASSETS, BODY))])
    assert stored == {"http://site.test/": 0}
    assert found == set()


def test_audit_mixed_content_counts_srcset_candidates_and_frames(tmp_path: Path) -> None:
    """A browser loads srcset candidates and frames as it loads a src: an http:// one on an
    https page is mixed content too (frames are blocked outright)."""
    body = (
        '<img src="/a.png" srcset="http://cdn.test/a-2x.png 2x, /a-3x.png 3x" alt="a">'
        '<picture><source srcset="http://cdn.test/b.webp" type="image/webp">'
        '<img src="/b.png" alt="b"></picture>'
        '<iframe src="http://video.test/embed/1"></iframe>'
    )
    stored, found = _judge(tmp_path, [("https://site.test/", _doc("", body))])
    assert stored == {"https://site.test/": 3}
    assert found == {("https://site.test/", "3 http:// assets")}
