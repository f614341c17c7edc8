"""Excel's cell limit and CSV formula injection, as pure functions."""

from __future__ import annotations

from pathlib import Path

import openpyxl
import pytest
import xlsxwriter

from fairfetch.audit.export import (
    EXCEL_MAX_CELL,
    EXCEL_MAX_ROWS,
    WORKBOOK_OPTIONS,
    Sheet,
    _cell,
    _XlsxSheetWriter,
    csv_safe,
)


@pytest.mark.parametrize("value", ["=1+1", "+1", "-2", "@SUM(A1)", "\tx", "\r=x"])
def test_audit_csv_formula_cells_neutralised(value: str) -> None:
    assert csv_safe(value) == "'" + value


@pytest.mark.parametrize("value", ["plain", "a=b", "", 5, -3, None, "http://x.test/?a=-1"])
def test_audit_csv_harmless_cells_kept(value: object) -> None:
    assert csv_safe(value) == value


def test_audit_excel_cell_truncated_and_says_so() -> None:
    long = "x" * 40_000
    cut = _cell(long)
    assert len(cut) == EXCEL_MAX_CELL
    assert cut.endswith("[truncated: 40000 characters in all]")
    assert _cell("short") == "short"
    assert _cell("y" * EXCEL_MAX_CELL) == "y" * EXCEL_MAX_CELL


def test_audit_workbook_cells_are_text_as_written(tmp_path: Path) -> None:
    """Titles, anchors and URLs are written by strangers: a workbook cell holds them as text.

    XlsxWriter's defaults would turn "=..." into a live formula and "http://..." into a
    hyperlink, and a hyperlink past Excel's 65,530 a sheet (or longer than 2,079 characters)
    into an empty cell: a Links sheet of a large site came out mostly blank.
    """
    long_url = "http://site.test/" + "a" * 3_000
    rows: list[tuple[object, ...]] = [
        ('=HYPERLINK("http://evil.test/","click")', long_url),
        ("external:c:\\windows\\system32\\calc.exe", "file:///etc/passwd"),
    ]
    rows += [(f"page {i}", f"http://site.test/{i}") for i in range(66_000)]
    sheet = Sheet("Links", ("Anchor", "To"), lambda conn, site, run: rows)
    path = tmp_path / "cells.xlsx"
    book = xlsxwriter.Workbook(str(path), WORKBOOK_OPTIONS)
    try:
        assert _XlsxSheetWriter(book, sheet, EXCEL_MAX_ROWS).write_all(rows) == len(rows)
    finally:
        book.close()
    ws = openpyxl.load_workbook(path, read_only=True)["Links"]
    got = list(ws.iter_rows(min_row=2, values_only=True))
    assert got == rows
    first = next(ws.iter_rows(min_row=2, max_row=2))
    assert [c.data_type for c in first] == ["s", "s"]  # text, not a formula


def test_audit_excel_cell_limit_counts_utf16_units() -> None:
    """Excel counts a cell in UTF-16 units: 20,000 emoji are 40,000 of them. Left to
    XlsxWriter the cell was cut silently; ours is cut on a character boundary and says so."""
    emoji = "😀" * 20_000
    cut = _cell(emoji)
    assert len(cut.encode("utf-16-le")) // 2 <= EXCEL_MAX_CELL
    assert cut.endswith("[truncated: 20000 characters in all]")
    assert cut.startswith("😀" * 1000)
    assert "\ud83d" not in cut  # no half of a surrogate pair
    fits = "😀" * (EXCEL_MAX_CELL // 2)
    assert _cell(fits) == fits
