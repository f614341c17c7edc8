"""Excel's cell limit and CSV formula injection, as pure functions."""

from __future__ import annotations

import pytest

from fairfetch.audit.export import EXCEL_MAX_CELL, _cell, csv_safe


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
