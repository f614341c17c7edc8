"""``notify grant NAME CREDITS``: credits beyond what the ledger stores (a 32-bit INTEGER on
PostgreSQL) are refused up front in one line naming the argument; they crashed with an
OverflowError traceback (SQLite) or a driver error (PostgreSQL) inside the transaction."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from fairfetch.cli import app


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    url = f"sqlite:///{tmp_path}/grant.db"
    monkeypatch.setenv("FAIRFETCH_DB", url)
    return url


@pytest.mark.parametrize("credits", ["99999999999999999999999999", str(2**31)])
def test_cli_grant_refuses_credits_the_ledger_cannot_hold(db: str, credits: str) -> None:
    r = CliRunner().invoke(app, ["notify", "grant", "Publisher", credits])
    assert r.exit_code == 2, (r.output, r.exception)
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert "credits" in r.output.lower()


def test_cli_grant_takes_the_largest_amount_and_zero(db: str) -> None:
    runner = CliRunner()
    r = runner.invoke(app, ["notify", "grant", "Publisher", str(2**31 - 1), "--json"])
    assert r.exit_code == 0, (r.output, r.exception)
    assert '"balance": 2147483647' in r.stdout
    r = runner.invoke(app, ["notify", "grant", "Publisher", "0", "--json"])
    assert r.exit_code == 0, (r.output, r.exception)
    assert '"balance": 2147483647' in r.stdout
