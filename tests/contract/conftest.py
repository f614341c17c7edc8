"""Fixtures of the contract suite: one testbed for the session, and ``cli(...)``, which runs the
``fairfetch`` command in-process on a fresh SQLite database that reaches the testbed only."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from fairfetch.cli import app
from fairfetch.config import Settings
from fairfetch.testing import Testbed, testbed_thread

#: Every FAIRFETCH_* variable load_settings reads: cleared so the caller's shell cannot leak in.
SETTING_VARS = ["FAIRFETCH_" + f.name.upper() for f in dataclasses.fields(Settings)]


@pytest.fixture(scope="session")
def tb() -> Iterator[Testbed]:
    with testbed_thread(seed=5) as testbed:
        yield testbed


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in SETTING_VARS:
        monkeypatch.delenv(var, raising=False)


class Cli:
    """``cli("feeds", "list")`` → click Result; ``cli.json(...)`` asserts exit 0 and parses."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env = env
        self.runner = CliRunner()

    def __call__(self, *args: str, env: dict[str, str] | None = None) -> Result:
        return self.runner.invoke(app, list(args), env={**self.env, **(env or {})})

    def ok(self, *args: str) -> Result:
        r = self(*args)
        assert r.exit_code == 0, (args, r.output, r.exception)
        return r

    def json(self, *args: str) -> Any:
        return json.loads(self.ok(*args).stdout)


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Each contract test runs on both stores (PostgreSQL under scripts/with-postgres)."""
    if request.param == "postgresql":
        return str(request.getfixturevalue("pg_url"))
    return f"sqlite:///{tmp_path}/contract.db"


@pytest.fixture
def cli(tb: Testbed, db_url: str) -> Cli:
    return Cli({**tb.env(), "FAIRFETCH_DB": db_url})


def assert_clean_error(r: Result, *named: str) -> None:
    """A rejected command: exit 2, each named input in the message, no traceback."""
    assert r.exit_code == 2, (r.exit_code, r.output, r.exception)
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert "Traceback" not in r.output
    for name in named:
        assert name in r.output, (name, r.output)

