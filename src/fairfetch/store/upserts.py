"""The INSERT construct that takes ``ON CONFLICT`` on each backend we run on.

PostgreSQL and SQLite spell upserts alike, but SQLAlchemy builds them from each dialect's own
``insert``: every store module that writes a row another writer may have stored first (two
processes on one store) picks it here.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

__all__ = ["CONFLICT_DIALECTS", "conflict_insert"]

#: Dialects whose INSERT takes ON CONFLICT … DO NOTHING / DO UPDATE.
CONFLICT_DIALECTS = frozenset({"postgresql", "sqlite"})


def conflict_insert(table: sa.Table, dialect: str) -> Any:
    """``INSERT INTO table`` for ``dialect`` (one of CONFLICT_DIALECTS), ready for
    ``.on_conflict_do_nothing()`` / ``.on_conflict_do_update()``."""
    if dialect == "postgresql":
        from sqlalchemy.dialects import postgresql

        return postgresql.insert(table)
    from sqlalchemy.dialects import sqlite

    return sqlite.insert(table)
