"""Suite-wide fixtures. Area-specific fixtures live in each area's own conftest.py."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sqlite3
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractContextManager

import pytest
from hypothesis import settings

# No timed assertions in tests (speed is measured in bench/): hypothesis's default 200 ms deadline
# per example is one, and on a loaded 2-core machine it fails examples that are merely slow.
settings.register_profile("fairfetch", deadline=None)
settings.load_profile("fairfetch")


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A fresh, empty PostgreSQL database on the throwaway loopback cluster.

    `make test` runs the suite under scripts/with-postgres, which exports FAIRFETCH_TEST_PG. In CI
    a missing cluster is a failure, not a skip: the remote database is where unbindable values
    show up, and a suite that silently skipped it would hide exactly those bugs.
    """
    base = os.environ.get("FAIRFETCH_TEST_PG")
    if not base:
        if os.environ.get("CI"):
            pytest.fail("FAIRFETCH_TEST_PG is not set: run the suite under scripts/with-postgres")
        pytest.skip("no PostgreSQL cluster (run under scripts/with-postgres)")
    import sqlalchemy as sa

    name = "t_" + uuid.uuid4().hex[:12]
    admin = sa.create_engine(base, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    url = base.rsplit("/", 1)[0] + "/" + name
    try:
        yield url
    finally:
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: os.PathLike[str]) -> str:
    """The store under test on both backends: one contract suite, two databases."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/fairfetch.db"
    return str(request.getfixturevalue("pg_url"))


@pytest.fixture
async def stop_on_warning() -> AsyncIterator[asyncio.Event]:
    """An event set as soon as fairfetch logs a warning or worse: ends a ``run_forever`` loop
    under test at its first complaint (no sleeps, no polling)."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()

    class _Stop(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if record.levelno >= logging.WARNING:
                loop.call_soon_threadsafe(stop.set)

    handler = _Stop()
    logging.getLogger("fairfetch").addHandler(handler)
    try:
        yield stop
    finally:
        logging.getLogger("fairfetch").removeHandler(handler)


@contextlib.contextmanager
def _sqlite_write_lock(path: os.PathLike[str] | str) -> Iterator[None]:
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        yield
    finally:
        other.execute("ROLLBACK")
        other.close()


@pytest.fixture
def sqlite_write_lock() -> Callable[[os.PathLike[str] | str], AbstractContextManager[None]]:
    """``with sqlite_write_lock(path):`` another process's hold on a SQLite file (an operator's
    ``sqlite3`` shell left in a transaction): its write lock taken for the block."""
    return _sqlite_write_lock
