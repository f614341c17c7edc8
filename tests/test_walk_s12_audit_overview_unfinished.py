"""The Overview of a crawl that did not finish (killed, then exported) said "Cut short by: no
(the whole site was crawled)" two lines above "URLs discovered, not crawled: 579". Nor is the
limit an earlier run was cut by (kept in the file while a resumed run goes past it) the answer.
It now says the crawl did not finish; a finished crawl's line is unchanged."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from fairfetch.audit.crawlfile import CrawlFile
from fairfetch.audit.export import export_crawl
from fairfetch.audit.pagerows import Fetched, PageRowBuilder
from fairfetch.audit.urls import Scope

S = "http://site.test"
HOME = (b"<html lang=en><head><title>Home of the site</title></head><body>"
        b"<a href='/b'>b</a></body></html>")


def _crawl_file(path: Path, *, finished: bool, cut_short: str) -> None:
    """The start page done, /b queued: as a crawl leaves the file when it is killed."""
    home = Fetched(S + "/", 200, None, "", {"content-type": "text/html"}, HOME, len(HOME), 0.01)
    cf = CrawlFile(path)
    try:
        cf.write_batch([("queue", (1, home.url, 0, 0, "start")), ("queue", (2, S + "/b", 1, 1,
                        "link")), *PageRowBuilder(Scope(S + "/"), {}, {}).build(1, home).ops])
        cf.set_meta(start_url=S + "/", cut_short=cut_short)
        if finished:
            cf.finalize()
            cf.set_meta(finished_at="2026-12-01T00:00:00+00:00")
    finally:
        cf.close()


def _overview(tmp_path: Path, **state: object) -> dict[str, str]:
    _crawl_file(tmp_path / "site.crawl", **state)  # type: ignore[arg-type]
    export_crawl(tmp_path / "site.crawl", csv_dir=tmp_path / "csv")
    with (tmp_path / "csv" / "overview.csv").open(encoding="utf-8", newline="") as fh:
        return {row[0]: row[1] for row in csv.reader(fh)}


@pytest.mark.parametrize("earlier_cut", ["", "max_pages"])
def test_walk_s12_audit_overview_of_an_unfinished_crawl(tmp_path: Path, earlier_cut: str) -> None:
    overview = _overview(tmp_path, finished=False, cut_short=earlier_cut)
    assert overview["URLs discovered, not crawled"] == "1"
    assert overview["Finished at"].startswith("not finished")
    assert overview["Cut short by"] == "not known: the crawl did not finish"


@pytest.mark.parametrize(("cut", "said"), [("", "no (the whole site was crawled)"),
                                           ("max_pages", "max_pages")])
def test_walk_s12_audit_overview_of_a_finished_crawl(tmp_path: Path, cut: str, said: str) -> None:
    assert _overview(tmp_path, finished=True, cut_short=cut)["Cut short by"] == said
