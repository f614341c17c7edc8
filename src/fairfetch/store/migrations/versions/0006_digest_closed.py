"""A digest issue's closing time: from then on it takes no more items.

Revision ID: 0006_digest_closed
Revises: 0003_notify
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from fairfetch.store.types import UTCDateTime

revision = "0006_digest_closed"
down_revision = "0003_notify"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("notify_outbox", sa.Column("closed_at", UTCDateTime))
    # Issues closed before the column existed were marked by an empty subject.
    op.execute(
        "UPDATE notify_outbox SET closed_at = created_at, subject = NULL "
        "WHERE status = 'pending' AND subject = ''"
    )


def downgrade() -> None:
    op.execute(
        "UPDATE notify_outbox SET subject = '' WHERE status = 'pending' AND closed_at IS NOT NULL"
    )
    op.drop_column("notify_outbox", "closed_at")  # SQLite >= 3.35 drops a column in place
