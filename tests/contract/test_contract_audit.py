"""`fairfetch audit crawl|export|report` as the contract lists them, on the testbed's site."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from openpyxl import load_workbook

from fairfetch.testing import Testbed

from .conftest import Cli, assert_clean_error


@pytest.fixture
def site(tb: Testbed) -> str:
    return tb.url("s40.acme-audit.test", "/")


def test_crawl_resume_report_export(cli: Cli, site: str, tmp_path: Path) -> None:
    out = tmp_path / "site.crawl"
    cli.ok("audit", "crawl", site, "--out", str(out), "--max-pages", "5", "-q")
    first = cli.json("audit", "report", str(out), "--json")
    assert {"start_url", "pages", "rules", "cut_short", "finished"} <= set(first)
    assert first["start_url"] == site
    assert first["pages"] == 5
    for rule in first["rules"]:
        assert {"id", "severity", "title", "count", "findings"} <= set(rule)
        assert rule["severity"] in ("error", "warning", "notice")
        assert rule["count"] >= len(rule["findings"]) >= 1

    # an existing crawl file is never overwritten without --resume
    assert_clean_error(cli("audit", "crawl", site, "--out", str(out), "-q"), "--resume")
    assert cli.json("audit", "report", str(out), "--json")["pages"] == 5
    cli.ok("audit", "crawl", site, "--out", str(out), "--max-pages", "12", "--resume", "-q")
    assert cli.json("audit", "report", str(out), "--json")["pages"] == 12

    xlsx, csv_dir = tmp_path / "site.xlsx", tmp_path / "csv"
    cli.ok("audit", "export", str(out), "--xlsx", str(xlsx), "--csv", str(csv_dir))
    book = load_workbook(xlsx, read_only=True)
    assert "Issues" in book.sheetnames
    issues = csv_dir / "issues.csv"
    with issues.open(newline="", encoding="utf-8") as f:
        assert next(csv.reader(f))  # a header row
    assert "Severity" in cli.ok("audit", "report", str(out)).stdout


def test_audit_bad_input_is_named_and_exit_2(cli: Cli, site: str, tmp_path: Path) -> None:
    out = tmp_path / "a.crawl"
    cli.ok("audit", "crawl", site, "--out", str(out), "--max-pages", "3", "-q")
    missing = tmp_path / "missing.crawl"
    junk = tmp_path / "junk.crawl"
    junk.write_text("not a crawl file")
    for args, named in [
        (["crawl", "ftp://x.test/", "--out", str(tmp_path / "b.crawl")], "ftp://x.test/"),
        (["crawl", site, "--out", str(tmp_path / "no-dir" / "b.crawl")], "no-dir"),
        (["report", str(missing)], "missing.crawl"),
        (["report", str(junk), "--json"], "junk.crawl"),
        (["export", str(missing), "--xlsx", str(tmp_path / "x.xlsx")], "missing.crawl"),
        (["export", str(out)], "--xlsx"),
        (["export", str(out), "--xlsx", str(tmp_path / "no-dir" / "x.xlsx")], "no-dir"),
        (["export", str(out), "--xlsx", str(tmp_path)], str(tmp_path)),
        (["export", str(out), "--csv", str(junk)], "junk.crawl"),
        (["report", str(out), "--threshold", "bogus"], "bogus"),
    ]:
        assert_clean_error(cli("audit", *args), named)
    assert cli("audit", "crawl", site, "--out", str(out), "--max-pages", "0").exit_code == 2
    # a directory given as the crawl file: said so, not "exists: pass --resume" (which then
    # failed too)
    for extra in ([], ["--resume"]):
        said = cli("audit", "crawl", site, "--out", str(tmp_path), *extra)
        assert_clean_error(said, str(tmp_path))
        assert "is a directory" in said.output
    # the crawl file is untouched by all of that
    assert cli.json("audit", "report", str(out), "--json")["pages"] == 3
    assert junk.read_text() == "not a crawl file"
