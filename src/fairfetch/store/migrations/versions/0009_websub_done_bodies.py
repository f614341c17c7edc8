"""WebSub deliveries already processed give back their bodies.

A done delivery's body is never read again (the processor reads it once); until now each was
kept, so every fat ping (up to 10 MB) grew the database for ever. New ones drop it when they
are done (``finish_deliveries``); this empties those stored before. Failed deliveries keep
theirs, for finding out why.

Revision ID: 0009_websub_done_bodies
Revises: 0002_websub
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009_websub_done_bodies"
down_revision = "0002_websub"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A bound empty bytes value: a BLOB on SQLite, a bytea on PostgreSQL (a '' literal would be
    # a TEXT on SQLite, read back as str).
    op.get_bind().execute(
        sa.text("UPDATE websub_deliveries SET body = :empty WHERE status = 'done'"),
        {"empty": b""},
    )


def downgrade() -> None:
    pass  # the bodies are gone; nothing read them
