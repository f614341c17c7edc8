"""CSV formula injection: the leading characters OWASP lists (CSV Injection: =, +, -, @, tab,
carriage return and, since 2025, line feed) and ASVS 1.2.10 adds (NUL) are neutralised; numbers
stay numbers, negative ones too."""

from __future__ import annotations

import pytest

from fairfetch.audit.export import csv_safe


@pytest.mark.parametrize("value", ["\n=HYPERLINK(\"http://x.test\")", "\n+1", "\x00=1+1"])
def test_audit_csv_line_feed_and_nul_starts_are_neutralised(value: str) -> None:
    assert csv_safe(value) == "'" + value


@pytest.mark.parametrize("value", [-1, -0.5, 0, 404, "a\n=b", "x\x00"])
def test_audit_csv_numbers_and_inner_characters_are_kept(value: object) -> None:
    assert csv_safe(value) == value


#: OWASP's testing guide (WSTG, Testing for CSV Injection) lists the full-width forms too: a
#: spreadsheet in an East Asian locale may read them as the ASCII trigger.
@pytest.mark.parametrize(
    "value", ["\uff1dHYPERLINK(\"http://x.test\")", "\uff0b1+1", "\uff0d1+1", "\uff20SUM(1,1)"]
)
def test_audit_csv_full_width_formula_starts_are_neutralised(value: str) -> None:
    assert csv_safe(value) == "'" + value


def test_audit_csv_full_width_signs_inside_a_cell_are_kept() -> None:
    assert csv_safe("a\uff1db") == "a\uff1db"
