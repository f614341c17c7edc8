"""Schema creation and migration on first use.

Every job's migrations branch from ``0001_core``; we upgrade to ``heads`` so independent jobs
don't have to chain on each other.
"""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory

from fairfetch.errors import StoreError
from fairfetch.store.engine import SQLITE_TABLES, foreign_tables

_SCRIPTS = str(Path(__file__).with_name("migrations"))

#: First key of the PostgreSQL advisory lock that serialises migrations ("migr").
_ADVISORY_NS = 0x6D696772


def _config(connection: sa.Connection | None = None) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", _SCRIPTS)
    if connection is not None:
        cfg.attributes["connection"] = connection
    return cfg


def _current(engine: sa.Engine) -> set[str]:
    with engine.connect() as conn:
        return set(MigrationContext.configure(conn).get_current_heads())


def is_current(engine: sa.Engine) -> bool:
    """True when every migration head is applied (cheap: one small query)."""
    return _current(engine) == set(ScriptDirectory.from_config(_config()).get_heads())


def _refuse_unknown(engine: sa.Engine, current: set[str]) -> None:
    """A revision we have no script for was written by a newer fairfetch (or another tool):
    say so, naming the database and the revision, instead of Alembic's traceback."""
    known = {script.revision for script in ScriptDirectory.from_config(_config()).walk_revisions()}
    unknown = sorted(current - known)
    if unknown:
        shown = engine.url.render_as_string(hide_password=True)
        raise StoreError(
            f"database {shown!r} is at schema revision {', '.join(unknown)}, which this "
            "fairfetch does not know: it was written by a newer fairfetch (run that version, "
            "or restore a backup from before the upgrade), or it is not a fairfetch database"
        )


def _refuse_foreign(engine: sa.Engine, conn: sa.Connection) -> None:
    """Another application's SQLite file given as the database (a wrong --db) is refused
    as it is, instead of getting fairfetch's thirty tables added beside its own."""
    stamped = bool(MigrationContext.configure(conn).get_current_heads())
    tables = foreign_tables(conn.exec_driver_sql(SQLITE_TABLES).scalars().all(), stamped=stamped)
    if tables:
        shown = engine.url.render_as_string(hide_password=True)
        listed = ", ".join(tables[:5]) + (", …" if len(tables) > 5 else "")
        raise StoreError(
            f"database {shown!r} is not a fairfetch database (it has tables {listed} and no "
            "fairfetch schema version); left untouched: give fairfetch its own file"
        )


def upgrade(engine: sa.Engine) -> None:
    """Apply every pending migration in one transaction: a start killed midway leaves the
    database as it was, for the next start to upgrade."""
    current = _current(engine)
    if current == set(ScriptDirectory.from_config(_config()).get_heads()):
        _wal(engine)
        return
    _refuse_unknown(engine, current)
    if engine.dialect.name == "sqlite":
        _upgrade_sqlite(engine)
        _wal(engine)
        return
    with engine.begin() as conn:
        # Two processes starting together on a new database: the second waits here, then
        # finds the schema current, instead of failing on the first one's tables.
        conn.execute(sa.text("SELECT pg_advisory_xact_lock(:ns, 0)"), {"ns": _ADVISORY_NS})
        command.upgrade(_config(conn), "heads")


def _wal(engine: sa.Engine) -> None:
    """A SQLite database accepted as fairfetch's runs in WAL mode (the engine switches only
    new ones itself, so that another program's file is refused as it is). One read when it
    already does; a copy restored from a backup in another mode is switched here."""
    if engine.dialect.name != "sqlite" or engine.url.database in (None, "", ":memory:"):
        return
    with engine.connect() as conn:
        if conn.exec_driver_sql("PRAGMA journal_mode").scalar() != "wal":
            conn.exec_driver_sql("PRAGMA journal_mode=WAL")


def _upgrade_sqlite(engine: sa.Engine) -> None:
    """SQLite's DDL is transactional, but the Python driver only opens a transaction before
    INSERT/UPDATE/DELETE, so each CREATE/ALTER committed on its own: a start killed midway left
    half a schema under the old revision, and every later start failed on it ("duplicate
    column", "table already exists"). So the driver's transaction handling is turned off and
    we open the transaction ourselves. IMMEDIATE takes the write lock first: a second process
    starting at the same moment waits (busy timeout), then finds the schema current."""
    with engine.connect() as conn:
        conn.execution_options(isolation_level="AUTOCOMMIT")
        conn.exec_driver_sql("BEGIN IMMEDIATE")
        try:
            _refuse_foreign(engine, conn)
            command.upgrade(_config(conn), "heads")
        except BaseException:
            conn.exec_driver_sql("ROLLBACK")
            raise
        conn.exec_driver_sql("COMMIT")
