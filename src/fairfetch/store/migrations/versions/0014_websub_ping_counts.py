"""Pings to callback tokens we never issued are counted, one row a minute, not logged one by one.

Anyone may post to ``/websub/callback/<anything>``: each such post wrote a ``websub_pings`` row,
so a stranger's loop grew the database without bound (~100 bytes a request). The ``unknown``
ones now share a row per minute and its ``pings`` count; every other outcome stays one row per
ping (``pings`` = 1, the value existing rows get).

Revision ID: 0014_websub_ping_counts
Revises: 0013_wide_websub_ids
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0014_websub_ping_counts"
down_revision = "0013_wide_websub_ids"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # In place on both backends (a constant default): no rebuild of a table that may be large.
    op.add_column(
        "websub_pings", sa.Column("pings", sa.Integer, nullable=False, server_default="1")
    )


def downgrade() -> None:
    op.drop_column("websub_pings", "pings")  # SQLite >= 3.35 drops a column in place
