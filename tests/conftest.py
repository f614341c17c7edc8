"""Suite-wide fixtures. Area-specific fixtures live in each area's own conftest.py."""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import os
import socket
import sqlite3
import threading
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractContextManager

import pytest
from hypothesis import settings

# No timed assertions in tests (speed is measured in bench/): hypothesis's default 200 ms deadline
# per example is one, and on a loaded 2-core machine it fails examples that are merely slow.
settings.register_profile("fairfetch", deadline=None)
settings.load_profile("fairfetch")


# --- loopback only ------------------------------------------------------------------------------
# Tests send traffic to 127.0.0.0/8 only. The fetcher's perimeter refuses the rest, but a test
# can reach past it by mistake: a host name with no resolver override asks the machine's DNS
# (traffic off the machine), a client built in a test connects wherever it is told. This guard
# holds every test process to loopback: a name lookup (other than an IP literal or localhost)
# or a connection to an address outside 127.0.0.0/8 and ::1 is refused as the network would
# refuse it, and the test that made it fails, even if it caught the error. It covers this
# process only (subprocesses, Chromium and libpq are on their own: they are given loopback
# addresses). ``allow_name_lookups`` is for the guard's own test.
_offences: list[str] = []
_offences_lock = threading.Lock()
_real_getaddrinfo = socket.getaddrinfo
_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


def _loopback_literal(host: object) -> bool | None:
    """True/False for an IP literal on/off loopback; None when ``host`` is a name."""
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    if not isinstance(host, str):
        return None
    try:
        return ipaddress.ip_address(host.strip("[]").split("%", 1)[0]).is_loopback
    except ValueError:
        return None


def _offend(what: str) -> None:
    with _offences_lock:
        _offences.append(what)


def _guarded_getaddrinfo(host, *args, **kwargs):  # type: ignore[no-untyped-def]
    name = host.decode("ascii", "replace") if isinstance(host, bytes) else host
    if (
        name is not None
        and name not in ("", "localhost")
        and _loopback_literal(name) is None
        and not (isinstance(name, str) and name.rstrip(".").lower() == "localhost")
    ):
        _offend(f"DNS lookup of {name!r}")
        raise socket.gaierror(socket.EAI_NONAME, f"test guard: {name!r} is not looked up")
    return _real_getaddrinfo(host, *args, **kwargs)


def _check_address(sock: socket.socket, address: object) -> None:
    if sock.family not in (socket.AF_INET, socket.AF_INET6):
        return
    host = address[0] if isinstance(address, tuple) and address else address
    if _loopback_literal(host) is False:
        _offend(f"connection to {address!r}")
        raise ConnectionRefusedError(f"test guard: {address!r} is not on loopback")


def _guarded_connect(self, address):  # type: ignore[no-untyped-def]
    _check_address(self, address)
    return _real_connect(self, address)


def _guarded_connect_ex(self, address):  # type: ignore[no-untyped-def]
    _check_address(self, address)
    return _real_connect_ex(self, address)


socket.getaddrinfo = _guarded_getaddrinfo
socket.socket.connect = _guarded_connect  # type: ignore[method-assign]
socket.socket.connect_ex = _guarded_connect_ex  # type: ignore[method-assign]


class LoopbackGuard:
    """What the guard refused during the current test (for the guard's own tests)."""

    def take(self) -> list[str]:
        """The refusals so far, forgiven: the test will not fail for them."""
        with _offences_lock:
            seen, _offences[:] = list(_offences), []
        return seen


@pytest.fixture
def loopback_guard() -> LoopbackGuard:
    return LoopbackGuard()


@pytest.fixture(autouse=True)
def _loopback_only() -> Iterator[None]:
    with _offences_lock:
        _offences.clear()
    yield
    with _offences_lock:
        seen, _offences[:] = list(_offences), []
    if seen:
        pytest.fail("reached past loopback: " + "; ".join(seen[:5]), pytrace=False)


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
