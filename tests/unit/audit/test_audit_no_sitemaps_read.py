"""A crawl run with --no-sitemaps read no sitemap: every rule about what the sitemaps list
(orphans in the sitemap, non-indexable URLs in it, its URLs outside the crawl) cannot be
answered, and says so as no-sitemap does, instead of reporting none. The Orphans sheet says
"(not computed)" rather than being an empty list, which reads as "no orphans"."""

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
HTML = {"content-type": "text/html"}
SITEMAP_RULES = {
    "no-sitemap", "orphan-in-sitemap", "non-indexable-in-sitemap", "sitemap-url-not-crawled",
}  # fmt: skip


def _doc(title: str, body: str = "") -> bytes:
    return f"<html lang=en><head><title>{title}</title></head><body>{body}</body></html>".encode()


def _crawl_file(path: Path, sitemaps: str) -> None:
    home = _doc("Home", '<a href="/a">a</a>')
    fetched = [
        Fetched(S + "/", 200, None, "", HTML, home, len(home), 0.01),
        Fetched(S + "/a", 200, None, "", HTML, _doc("A"), 40, 0.01),
    ]
    cf = crawl_file_of(path, S + "/", fetched)
    cf.set_meta(sitemaps=sitemaps)
    cf.close()


def _run(path: Path):  # type: ignore[no-untyped-def]
    cf = CrawlFile(path, create=False)
    try:
        return run_rules(load_view(cf.conn))
    finally:
        cf.close()


def test_audit_no_sitemaps_silences_every_sitemap_rule_and_says_why(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    _crawl_file(path, "skipped")
    run = _run(path)
    assert set(run.silenced) >= SITEMAP_RULES
    for rule_id in SITEMAP_RULES:
        assert "--no-sitemaps" in run.silenced[rule_id], rule_id
    assert not {f.rule_id for f in run.findings} & SITEMAP_RULES
    export_crawl(path, csv_dir=tmp_path / "csv")
    with (tmp_path / "csv" / "orphans.csv").open(encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    assert rows[1][0] == "(not computed)"
    assert "--no-sitemaps" in rows[1][1]


def test_audit_sitemaps_read_leaves_the_sitemap_rules_on(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    _crawl_file(path, "read")
    run = _run(path)
    assert not set(run.silenced) & SITEMAP_RULES
    # No sitemap was found: that is no-sitemap's finding, not a silenced rule.
    assert "no-sitemap" in {f.rule_id for f in run.findings}
