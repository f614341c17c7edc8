"""The workbook opened with openpyxl, the CSVs, and the terminal report."""

from __future__ import annotations

import csv
import json
import sqlite3
from pathlib import Path

import openpyxl
from typer.testing import CliRunner

from fairfetch.audit.export import SHEETS, export_crawl
from fairfetch.cli import app
from fairfetch.testing import Testbed

from .conftest import crawl

SHEET_NAMES = [
    "Overview", "Issues by rule", "Issues", "Pages", "URLs", "Response Codes", "Broken Links",
    "Redirects", "Non-indexable", "Orphans", "Links", "External Links", "Images", "Resources",
    "Robots", "Sitemaps",
]  # fmt: skip


async def test_audit_workbook_sheets_resources_redirects(testbed: Testbed, tmp_path: Path) -> None:
    out = tmp_path / "site.db"
    await crawl(testbed, out)
    xlsx = tmp_path / "audit.xlsx"
    csv_dir = tmp_path / "csv"
    counts = export_crawl(out, xlsx=xlsx, csv_dir=csv_dir)
    assert [s.name for s in SHEETS] == SHEET_NAMES
    wb = openpyxl.load_workbook(xlsx, read_only=True)
    assert wb.sheetnames == SHEET_NAMES

    rows = list(wb["Resources"].iter_rows(values_only=True))
    header, data = rows[0], rows[1:]
    assert header[:5] == ("URL", "Type", "Status", "Size", "Pages")
    sizes = [r[3] for r in data]
    known = [s for s in sizes if s is not None]
    assert known == sorted(known, reverse=True)
    assert sizes.index(None) == len(known)  # unknown sizes last, all of them
    assert data[0][0].endswith("/static/bundle.js")
    assert data[0][4] > 100
    assert any(r[0].endswith("/static/font.woff2") and r[3] is None for r in data)

    rows = list(wb["Redirects"].iter_rows(values_only=True))
    header = rows[0]
    assert "to_status" in header
    col = header.index("to_status")
    by_from = {r[0].split(".test:")[1].split("/", 1)[1]: r[col] for r in rows[1:]}
    assert by_from["go/alive"] == 200
    assert by_from["go/pulled"] == 404

    ws = openpyxl.load_workbook(xlsx)["Pages"]
    assert ws.freeze_panes == "A2"
    assert ws.auto_filter.ref
    assert ws.auto_filter.ref.startswith("A1:")
    assert ws.column_dimensions["A"].width > 20
    assert counts["Pages"] == sqlite3.connect(out).execute(
        "SELECT COUNT(*) FROM pages WHERE state='done'").fetchone()[0]

    # One CSV per sheet; a cell beginning with = is neutralised.
    assert sorted(p.name for p in csv_dir.iterdir()) == sorted(
        f"{n.lower().replace(' ', '_').replace('-', '_')}.csv" for n in SHEET_NAMES)
    with (csv_dir / "links.csv").open(encoding="utf-8") as fh:
        anchors = [r[2] for r in csv.reader(fh)]
    assert any(a.startswith("'=HYPERLINK") for a in anchors)
    assert not any(a.startswith("=") for a in anchors)


async def test_audit_workbook_continues_past_the_row_limit(
    testbed: Testbed, tmp_path: Path
) -> None:
    out = tmp_path / "site.db"
    await crawl(testbed, out)
    xlsx = tmp_path / "small.xlsx"
    export_crawl(out, xlsx=xlsx, max_rows=1000)
    wb = openpyxl.load_workbook(xlsx, read_only=True)
    links = sqlite3.connect(out).execute("SELECT COUNT(*) FROM links").fetchone()[0]
    parts = [n for n in wb.sheetnames if n == "Links" or n.startswith("Links (")]
    assert len(parts) == -(-links // 1000)
    assert sum(wb[n].max_row - 1 for n in parts) == links


async def test_audit_cli_export_and_report(testbed: Testbed, tmp_path: Path) -> None:
    out = tmp_path / "site.db"
    await crawl(testbed, out)
    runner = CliRunner()
    result = runner.invoke(app, ["audit", "report", str(out), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    sev = [r["severity"] for r in data["rules"]]
    assert sev == sorted(sev, key=["error", "warning", "notice"].index)  # worst first
    assert any(r["id"] == "redirect-to-error" for r in data["rules"])
    result = runner.invoke(app, ["audit", "report", str(out)])
    assert result.exit_code == 0
    assert "redirect-to-error" in result.output
    result = runner.invoke(app, ["audit", "export", str(out), "--xlsx", str(tmp_path / "o.xlsx")])
    assert result.exit_code == 0
    assert (tmp_path / "o.xlsx").exists()
