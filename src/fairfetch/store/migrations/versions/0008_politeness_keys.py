"""A politeness key's Retry-After kept in the store: ``politeness_keys``.

Revision ID: 0008_politeness_keys
Revises: 0001_core
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from fairfetch.store.types import UTCDateTime

revision = "0008_politeness_keys"
down_revision = "0001_core"
branch_labels = ("politeness",)
depends_on = None


def upgrade() -> None:
    op.create_table(
        "politeness_keys",
        sa.Column("key", sa.Text, nullable=False),
        sa.Column("next_allowed_at", UTCDateTime, nullable=False),
        sa.PrimaryKeyConstraint("key", name="pk_politeness_keys"),
    )
    op.create_index(
        "ix_politeness_keys_next_allowed_at", "politeness_keys", ["next_allowed_at"]
    )


def downgrade() -> None:
    op.drop_index("ix_politeness_keys_next_allowed_at", table_name="politeness_keys")
    op.drop_table("politeness_keys")
