"""Engines for the two supported databases, set up the way fairfetch needs them.

SQLite runs in WAL mode so the web pages (readers) never block the crawler (the one writer), with
foreign keys on and a busy timeout rather than instant "database is locked" errors. PostgreSQL goes
through psycopg 3.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event

from fairfetch.errors import ConfigError

#: The tables and views of a SQLite database, its own bookkeeping (sqlite_sequence, …) aside.
SQLITE_TABLES = (
    "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') "
    "AND name NOT LIKE 'sqlite!_%' ESCAPE '!' ORDER BY name"
)


def foreign_tables(names: Sequence[str], *, stamped: bool) -> list[str]:
    """The tables (``names``, read with SQLITE_TABLES) of a SQLite database that is not
    fairfetch's: it has some, and no schema version stamped in ``alembic_version``
    (``stamped``: that table holds a revision). Empty for a new database and for ours.

    Such a file was given by mistake (another application's database, maybe one that uses
    Alembic too and was downgraded to its base, leaving ``alembic_version`` empty): fairfetch
    must refuse it untouched, not add its thirty tables beside the application's own."""
    if stamped or not set(names) - {"alembic_version"}:
        return []
    return list(names)


#: The drivers fairfetch runs on (and is tested with); another one named in a URL would be
#: imported by SQLAlchemy and fail as a ModuleNotFoundError traceback, or run untested.
_DRIVERS = {"sqlite": ("sqlite", "sqlite+pysqlite"),
            "postgresql": ("postgresql", "postgresql+psycopg")}  # fmt: skip

#: The password of a URL that does not parse: ``scheme://user:PASSWORD@`` or ``user:PASSWORD@``.
_UNPARSED_PASSWORD = re.compile(r"^((?:[^/@]*//)?[^:/@]*):[^@]*@")


def _unparsed_shown(url: str) -> str:
    """A URL SQLAlchemy cannot parse, its password masked all the same: it is quoted back to
    the user in the error, and terminals and logs are no place for it."""
    return _UNPARSED_PASSWORD.sub(r"\1:***@", url, count=1)


def _built(parsed: sa.URL, **kwargs: Any) -> sa.Engine:
    """SQLAlchemy reads the URL's options (``?timeout=``, ``?check_same_thread=``) as it builds
    the engine: a value it cannot read is the user's input, named, not a traceback."""
    try:
        return sa.create_engine(parsed, **kwargs)
    except (ValueError, TypeError, sa.exc.ArgumentError) as exc:
        shown = parsed.render_as_string(hide_password=True)
        raise ConfigError(f"database URL {shown!r}: an option in it is not valid ({exc})") from None


def create_engine(url: str, **kwargs: Any) -> sa.Engine:
    try:
        parsed = sa.make_url(url)
    except (sa.exc.ArgumentError, ValueError):  # ValueError: a port that is not a number
        raise ConfigError(f"database URL {_unparsed_shown(url)!r} is not a valid URL") from None
    backend = parsed.get_backend_name()
    if parsed.drivername not in _DRIVERS.get(backend, ()):
        backend = ""  # refused below, naming the URL
    if backend == "sqlite":
        engine = _built(parsed, **kwargs)

        @event.listens_for(engine, "connect")
        def _pragmas(dbapi_conn: Any, _record: Any) -> None:
            cur = dbapi_conn.cursor()
            # A new database is ours from birth. Any other is switched to WAL only once
            # migrate has accepted it as fairfetch's (WAL is a mark written into the file):
            # a database of another program is refused untouched.
            on_disk = parsed.database and parsed.database != ":memory:"
            if on_disk and cur.execute(SQLITE_TABLES).fetchone() is None:
                cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.execute("PRAGMA busy_timeout=30000")
            cur.close()

        return engine
    if backend == "postgresql":
        if parsed.drivername == "postgresql":
            parsed = parsed.set(drivername="postgresql+psycopg")
        kwargs.setdefault("pool_pre_ping", True)
        engine = _built(parsed, **kwargs)

        @event.listens_for(engine, "connect")
        def _utc(dbapi_conn: Any, _record: Any) -> None:
            # timestamptz comes back in the session's zone, the server's own by default (a
            # server in New York or Tokyo): an instant stored near year 1 or 9999 (Go's zero
            # time, an entry date some generators ship) is then outside Python's datetime, and
            # every read of its row failed. In UTC it comes back as it was stored.
            autocommit = dbapi_conn.autocommit
            dbapi_conn.autocommit = True
            try:
                dbapi_conn.execute("SET TIME ZONE 'UTC'")
            finally:
                dbapi_conn.autocommit = autocommit

        return engine
    # Named with its password masked: the message reaches terminals and logs.
    shown = parsed.render_as_string(hide_password=True)
    raise ConfigError(
        f"database URL {shown!r}: only sqlite:// and postgresql+psycopg:// are supported"
    )
