"""A crawl file of an interrupted crawl (no finished_at, never finalized) is judged on what it
holds, as a finished one is: the redirect far ends and the sitemap membership that finalize
derives are derived for the report too (read-only), not left NULL so that redirect-to-error,
redirect-chain, redirect-loop and non-indexable-in-sitemap go quiet without a word. And the
report says up front that the crawl did not finish."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fairfetch.audit.crawlfile import CrawlFile
from fairfetch.audit.export import export_crawl
from fairfetch.audit.pagerows import Fetched
from fairfetch.audit.rules import run_rules
from fairfetch.audit.view import load_view
from fairfetch.cli import app

from .conftest import crawl_file_of

S = "http://site.test"
HTML = {"content-type": "text/html"}


def _doc(title: str, body: str = "", head: str = "") -> bytes:
    return (
        f"<!doctype html><html lang=en><head><title>{title}</title>{head}</head>"
        f"<body>{body}</body></html>"
    ).encode()


def _crawl_file(path: Path, *, finished: bool) -> None:
    links = '<a href="/r">r</a><a href="/c1">c</a><a href="/l1">l</a><a href="/n">n</a>'
    home = _doc("Home", links)
    noindex = _doc("N", "", '<meta name="robots" content="noindex">')
    fetched = [
        Fetched(S + "/", 200, None, "", HTML, home, len(home), 0.01),
        Fetched(S + "/r", 301, None, "", {"location": "/gone"}, b"", 0, 0.01),
        Fetched(S + "/c1", 301, None, "", {"location": "/c2"}, b"", 0, 0.01),
        Fetched(S + "/c2", 301, None, "", {"location": "/c3"}, b"", 0, 0.01),
        Fetched(S + "/l1", 302, None, "", {"location": "/l2"}, b"", 0, 0.01),
        Fetched(S + "/l2", 302, None, "", {"location": "/l1"}, b"", 0, 0.01),
        Fetched(S + "/n", 200, None, "", HTML, noindex, len(noindex), 0.01),
        Fetched(S + "/gone", 404, None, "", HTML, b"no", 2, 0.01),
        Fetched(S + "/c3", 200, None, "", HTML, _doc("C3"), 30, 0.01),
    ]
    # The sitemap is read before any page (as the crawl does), then the pages are written.
    cf = CrawlFile(path)
    cf.write_batch([
        ("sitemap", (S + "/sitemap.xml", 200, "urlset", 1, None)),
        ("sitemap_urls", (S + "/n", S + "/sitemap.xml")),
    ])  # fmt: skip
    cf.close()
    crawl_file_of(path, S + "/", fetched, finished=finished).close()


def _findings(path: Path) -> set[tuple[str, str, str]]:
    cf = CrawlFile(path, create=False)
    try:
        site = load_view(cf.conn)
    finally:
        cf.close()
    return {(f.rule_id, f.url, f.detail) for f in run_rules(site).findings}


EXPECTED = {
    ("redirect-to-error", S + "/r", S + "/gone (404)"),
    ("redirect-chain", S + "/c1", "2 hops to " + S + "/c3"),
    ("redirect-loop", S + "/l1", ""),
    ("redirect-loop", S + "/l2", ""),
    ("non-indexable-in-sitemap", S + "/n", "noindex (meta robots)"),
}


@pytest.mark.parametrize("finished", [True, False], ids=["finished", "interrupted"])
def test_audit_interrupted_crawl_judges_redirects_and_sitemap_like_a_finished_one(
    tmp_path: Path, finished: bool
) -> None:
    path = tmp_path / "c.db"
    _crawl_file(path, finished=finished)
    found = _findings(path)
    assert found >= EXPECTED
    # Nothing is written to the crawl file by judging it: it stays an interrupted crawl.
    cf = CrawlFile(path, create=False)
    try:
        meta = cf.get_meta()
        to_status = cf.conn.execute(
            "SELECT to_status FROM redirects WHERE from_url = ?", (S + "/r",)
        ).fetchone()[0]
    finally:
        cf.close()
    assert ("finished_at" in meta) is finished
    assert to_status == (404 if finished else None)


def test_audit_interrupted_crawl_workbook_shows_where_redirects_end(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    _crawl_file(path, finished=False)
    export_crawl(path, csv_dir=tmp_path / "csv")
    with (tmp_path / "csv" / "redirects.csv").open(encoding="utf-8") as fh:
        rows = {r["From"]: r for r in csv.DictReader(fh)}
    assert rows[S + "/r"]["to_status"] == "404"
    assert rows[S + "/r"]["Final URL"] == S + "/gone"
    assert rows[S + "/c1"]["Final status"] == "200"
    assert rows[S + "/l1"]["Loop"] == "1"
    assert json.loads(rows[S + "/c1"]["Chain"])[-1] == {"url": S + "/c3", "status": 200}
    with (tmp_path / "csv" / "pages.csv").open(encoding="utf-8") as fh:
        in_sitemap = {r["URL"]: r["In sitemap"] for r in csv.DictReader(fh)}
    assert in_sitemap[S + "/n"] == "1"
    assert in_sitemap[S + "/"] == "0"
    with (tmp_path / "csv" / "overview.csv").open(encoding="utf-8") as fh:
        overview = dict(csv.reader(fh))
    assert overview["Finished at"].startswith("not finished")


def test_audit_report_says_the_crawl_did_not_finish(tmp_path: Path) -> None:
    done, cut = tmp_path / "done.db", tmp_path / "cut.db"
    _crawl_file(done, finished=True)
    _crawl_file(cut, finished=False)
    runner = CliRunner()
    out = runner.invoke(app, ["audit", "report", str(cut)], env={"COLUMNS": "200"})
    assert out.exit_code == 0, out.output
    assert "Crawl did not finish" in out.output
    assert "--resume" in out.output
    finished = runner.invoke(app, ["audit", "report", str(done)], env={"COLUMNS": "200"})
    assert finished.exit_code == 0, finished.output
    assert "did not finish" not in finished.output
