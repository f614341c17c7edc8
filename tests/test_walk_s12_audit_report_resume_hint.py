"""``audit report`` of a crawl that did not finish told the user to run ``fairfetch audit crawl
URL --out FILE --resume``, leaving them to find the start URL and the file. It now prints the
command itself, quoted for a shell."""

from __future__ import annotations

import shlex
from pathlib import Path

from typer.testing import CliRunner

from fairfetch.audit.crawlfile import CrawlFile
from fairfetch.audit.pagerows import Fetched, PageRowBuilder
from fairfetch.audit.urls import Scope
from fairfetch.cli import app

S = "http://site.test"
HOME = (b"<html lang=en><head><title>Home of the site</title></head><body>"
        b"<a href='/b'>b</a></body></html>")


def _unfinished_crawl_file(path: Path) -> None:
    home = Fetched(S + "/", 200, None, "", {"content-type": "text/html"}, HOME, len(HOME), 0.01)
    cf = CrawlFile(path)
    try:
        cf.write_batch([("queue", (1, home.url, 0, 0, "start")), ("queue", (2, S + "/b", 1, 1,
                        "link")), *PageRowBuilder(Scope(S + "/"), {}, {}).build(1, home).ops])
        cf.set_meta(start_url=S + "/", cut_short="")
    finally:
        cf.close()


def test_walk_s12_audit_report_of_an_unfinished_crawl_says_how_to_resume(
    tmp_path: Path,
) -> None:
    crawl_file = tmp_path / "my site.crawl"
    _unfinished_crawl_file(crawl_file)
    result = CliRunner().invoke(app, ["audit", "report", str(crawl_file)],
                                env={"COLUMNS": "400"})  # fmt: skip
    assert result.exit_code == 0, result.output
    again = f"fairfetch audit crawl {S}/ --out {shlex.quote(str(crawl_file))} --resume"
    assert again in result.output
    assert "URL --out FILE" not in result.output
