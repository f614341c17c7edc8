"""``notify outbox --limit N``: N is a number of rows the store can be asked for, 1 to 2**31-1.

A negative limit was a driver error traceback on PostgreSQL (LIMIT must not be negative) and the
whole outbox on SQLite; 0 printed an empty outbox as if nothing had been sent; a limit past 64
bits was an OverflowError traceback. Each is now one line naming --limit, exit 2.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from fairfetch.cli import app
from fairfetch.store import notify_repo as repo
from fairfetch.store import open_store


@pytest.fixture(params=["sqlite", "postgresql"])
def db(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> str:
    if request.param == "postgresql":
        url = str(request.getfixturevalue("pg_url"))
    else:
        url = f"sqlite:///{tmp_path_factory.mktemp('outbox')}/outbox.db"
    open_store(url).close()
    return url


@pytest.mark.parametrize("limit", ["-1", "0", "99999999999999999999", str(2**31)])
def test_cli_notify_outbox_refuses_a_limit_it_cannot_use(db: str, limit: str) -> None:
    r = CliRunner().invoke(app, ["--db", db, "notify", "outbox", "--limit", limit])
    assert r.exit_code == 2, (r.output, r.exception)
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert "--limit" in r.output


@pytest.mark.parametrize("limit", ["1", str(2**31 - 1)])
def test_cli_notify_outbox_takes_a_limit_in_range(db: str, limit: str) -> None:
    r = CliRunner().invoke(app, ["--db", db, "notify", "outbox", "--limit", limit, "--json"])
    assert r.exit_code == 0, (r.output, r.exception)
    store = open_store(db)
    try:
        assert json.loads(r.stdout) == repo.list_outbox(store, limit=1) == []
    finally:
        store.close()
