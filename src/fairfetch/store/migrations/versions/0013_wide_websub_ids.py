"""64-bit ids, on PostgreSQL, for the WebSub rows written on every push.

As 0012 does for the crawl rows: a ping is logged, and a push queued, per delivery from the
hub, and PostgreSQL's ``serial`` stops at 2,147,483,647 (SQLite's row ids are 64-bit).

Revision ID: 0013_wide_websub_ids
Revises: 0009_websub_done_bodies
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013_wide_websub_ids"
down_revision = "0009_websub_done_bodies"
branch_labels = None
depends_on = None

_TABLES = ("websub_pings", "websub_deliveries")


def _widen(kind: str) -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    for table in _TABLES:
        op.execute(sa.text(f"ALTER TABLE {table} ALTER COLUMN id TYPE {kind}"))
        op.execute(sa.text(f"ALTER SEQUENCE {table}_id_seq AS {kind}"))


def upgrade() -> None:
    _widen("bigint")


def downgrade() -> None:
    _widen("integer")
