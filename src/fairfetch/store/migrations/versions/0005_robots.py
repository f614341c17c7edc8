"""robots.txt copies kept between crawl processes.

Revision ID: 0005_robots
Revises: 0001_core
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from fairfetch.store.types import UTCDateTime

revision = "0005_robots"
down_revision = "0001_core"
branch_labels = ("robots",)
depends_on = None


def upgrade() -> None:
    op.create_table(
        "robots_txt",
        sa.Column("origin", sa.Text, nullable=False),
        sa.Column("state", sa.Text, nullable=False),
        sa.Column("status", sa.Integer),
        sa.Column("body", sa.Text),
        sa.Column("fetched_at", UTCDateTime, nullable=False),
        sa.PrimaryKeyConstraint("origin", name="pk_robots_txt"),
    )
    op.create_index("ix_robots_txt_fetched_at", "robots_txt", ["fetched_at"])


def downgrade() -> None:
    op.drop_index("ix_robots_txt_fetched_at", table_name="robots_txt")
    op.drop_table("robots_txt")
