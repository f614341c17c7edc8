"""Issue 7, "Outputs": Excel's limits respected — 1,048,575 rows a sheet (continue on a second
sheet), 32,767 characters a cell (truncate and say so) — read back with openpyxl.

The existing tests import the two limits without pinning them (a limit one too high would pass
every test and make a workbook Excel refuses), and check the row split by counts only. Here the
numbers themselves, the default the export uses, and what a continued sheet and a cut cell look
like in the file.
"""

from __future__ import annotations

import inspect
import zipfile
from pathlib import Path

import openpyxl
import xlsxwriter

from fairfetch.audit.export import (
    EXCEL_MAX_CELL,
    EXCEL_MAX_ROWS,
    WORKBOOK_OPTIONS,
    Sheet,
    _XlsxSheetWriter,
    export_crawl,
)


def test_acceptance_excel_limits_are_excels_own() -> None:
    # Excel: 1,048,576 rows a sheet (one of them our header) and 32,767 characters a cell.
    assert EXCEL_MAX_ROWS == 1_048_576 - 1
    assert EXCEL_MAX_CELL == 32_767
    assert inspect.signature(export_crawl).parameters["max_rows"].default == EXCEL_MAX_ROWS


def _write(tmp_path: Path, rows: list[tuple[object, ...]], max_rows: int) -> Path:
    sheet = Sheet("Links", ("From", "Anchor"), lambda conn, site, run: rows)
    path = tmp_path / "limits.xlsx"
    book = xlsxwriter.Workbook(str(path), WORKBOOK_OPTIONS)
    try:
        assert _XlsxSheetWriter(book, sheet, max_rows).write_all(rows) == len(rows)
    finally:
        book.close()
    return path


def test_acceptance_rows_past_the_limit_continue_on_a_second_sheet_with_its_header(
    tmp_path: Path,
) -> None:
    rows: list[tuple[object, ...]] = [(f"http://site.test/{i}", f"a{i}") for i in range(7)]
    path = _write(tmp_path, rows, max_rows=3)
    wb = openpyxl.load_workbook(path)
    assert wb.sheetnames == ["Links", "Links (2)", "Links (3)"]
    got: list[tuple[object, ...]] = []
    for name, expected_rows in (("Links", 3), ("Links (2)", 3), ("Links (3)", 1)):
        ws = wb[name]
        values = list(ws.iter_rows(values_only=True))
        assert values[0] == ("From", "Anchor"), name  # every part has the header row
        assert len(values) - 1 == expected_rows, name  # full parts hold exactly the limit
        assert ws.freeze_panes == "A2", name
        assert ws.auto_filter.ref, name
        got += values[1:]
    assert got == rows  # nothing lost, nothing repeated, in order


def test_acceptance_a_cell_over_the_limit_is_truncated_in_the_file_and_says_so(
    tmp_path: Path,
) -> None:
    long_title = "t" * 40_000
    exactly = "e" * EXCEL_MAX_CELL
    path = _write(tmp_path, [(long_title, exactly)], max_rows=EXCEL_MAX_ROWS)
    ws = openpyxl.load_workbook(path)["Links"]
    cut, kept = (c.value for c in ws[2])
    assert isinstance(cut, str)
    assert len(cut) <= EXCEL_MAX_CELL
    assert cut.startswith("t" * 30_000)
    assert "truncated" in cut
    assert "40000" in cut  # says how long the value was
    assert kept == exactly  # a cell at the limit is not cut


def test_acceptance_export_writes_in_constant_memory_mode(tmp_path: Path) -> None:
    """XlsxWriter's constant-memory mode writes each row out as it comes, its strings inline
    (no shared-strings table, which holds every distinct string of the workbook in memory):
    what the file of a real export shows."""
    from fairfetch.audit.crawlfile import CrawlFile

    crawl = tmp_path / "empty-crawl.db"
    CrawlFile(crawl).close()
    xlsx = tmp_path / "export.xlsx"
    export_crawl(crawl, xlsx=xlsx)
    with zipfile.ZipFile(xlsx) as z:
        names = z.namelist()
        assert "xl/sharedStrings.xml" not in names
        sheets = [n for n in names if n.startswith("xl/worksheets/sheet")]
        assert len(sheets) >= 16
        assert all(b't="inlineStr"' in z.read(n) for n in sheets)  # header rows at least
