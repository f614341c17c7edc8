"""Engines for the two supported databases, set up the way fairfetch needs them.

SQLite runs in WAL mode so the web pages (readers) never block the crawler (the one writer), with
foreign keys on and a busy timeout rather than instant "database is locked" errors. PostgreSQL goes
through psycopg 3.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy import event

from fairfetch.errors import ConfigError


def create_engine(url: str, **kwargs: Any) -> sa.Engine:
    try:
        parsed = sa.make_url(url)
    except sa.exc.ArgumentError:
        raise ConfigError(f"database URL {url!r} is not a valid URL") from None
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        engine = sa.create_engine(parsed, **kwargs)

        @event.listens_for(engine, "connect")
        def _pragmas(dbapi_conn: Any, _record: Any) -> None:
            cur = dbapi_conn.cursor()
            if parsed.database and parsed.database != ":memory:":
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
        return sa.create_engine(parsed, **kwargs)
    raise ConfigError(
        f"database URL {url!r}: only sqlite:// and postgresql+psycopg:// are supported"
    )
