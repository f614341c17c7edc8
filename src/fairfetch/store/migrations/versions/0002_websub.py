"""WebSub: subscriptions, durable delivery queue, ping log.

Revision ID: 0002_websub
Revises: 0001_core
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from fairfetch.store.types import UTCDateTime

revision = "0002_websub"
down_revision = "0001_core"
branch_labels = ("websub",)
depends_on = None


def upgrade() -> None:
    op.create_table(
        "websub_subscriptions",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("feed_id", sa.Integer),
        sa.Column("hub_url", sa.Text, nullable=False),
        sa.Column("topic_url", sa.Text, nullable=False),
        sa.Column("callback_token", sa.Text, nullable=False),
        sa.Column("secret", sa.Text, nullable=False),
        sa.Column("state", sa.Text, nullable=False, server_default="pending"),
        sa.Column("requested_lease", sa.Integer),
        sa.Column("lease_seconds", sa.Integer),
        sa.Column("verified_at", UTCDateTime),
        sa.Column("lease_expires_at", UTCDateTime),
        sa.Column("next_action_at", UTCDateTime),
        sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
        sa.Column("last_error", sa.Text),
        sa.Column("denied_reason", sa.Text),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("updated_at", UTCDateTime, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_websub_subscriptions"),
        sa.ForeignKeyConstraint(
            ["feed_id"],
            ["feeds.id"],
            name="fk_websub_subscriptions_feed_id_feeds",
            ondelete="SET NULL",
        ),
        sa.UniqueConstraint("callback_token", name="uq_websub_subscriptions_callback_token"),
    )
    op.create_index("ix_websub_subscriptions_feed_id", "websub_subscriptions", ["feed_id"])
    op.create_index("ix_websub_subscriptions_state", "websub_subscriptions", ["state"])
    op.create_index(
        "ix_websub_subscriptions_next_action_at", "websub_subscriptions", ["next_action_at"]
    )

    op.create_table(
        "websub_deliveries",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("subscription_id", sa.Integer, nullable=False),
        sa.Column("feed_id", sa.Integer),
        sa.Column("received_at", UTCDateTime, nullable=False),
        sa.Column("body", sa.LargeBinary, nullable=False),
        sa.Column("content_type", sa.Text, nullable=False, server_default=""),
        sa.Column("status", sa.Text, nullable=False, server_default="queued"),
        sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
        sa.Column("claimed_at", UTCDateTime),
        sa.Column("processed_at", UTCDateTime),
        sa.Column("error", sa.Text),
        sa.PrimaryKeyConstraint("id", name="pk_websub_deliveries"),
        sa.ForeignKeyConstraint(
            ["subscription_id"],
            ["websub_subscriptions.id"],
            name="fk_websub_deliveries_subscription_id_websub_subscriptions",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["feed_id"],
            ["feeds.id"],
            name="fk_websub_deliveries_feed_id_feeds",
            ondelete="CASCADE",
        ),
    )
    op.create_index("ix_websub_deliveries_status", "websub_deliveries", ["status"])

    op.create_table(
        "websub_pings",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("subscription_id", sa.Integer),
        sa.Column("feed_id", sa.Integer),
        sa.Column("at", UTCDateTime, nullable=False),
        sa.Column("outcome", sa.Text, nullable=False),
        sa.Column("http_status", sa.Integer, nullable=False, server_default="0"),
        sa.Column("detail", sa.Text, nullable=False, server_default=""),
        sa.PrimaryKeyConstraint("id", name="pk_websub_pings"),
        sa.ForeignKeyConstraint(
            ["subscription_id"],
            ["websub_subscriptions.id"],
            name="fk_websub_pings_subscription_id_websub_subscriptions",
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["feed_id"],
            ["feeds.id"],
            name="fk_websub_pings_feed_id_feeds",
            ondelete="SET NULL",
        ),
    )
    op.create_index("ix_websub_pings_at", "websub_pings", ["at"])


def downgrade() -> None:
    for name in ("websub_pings", "websub_deliveries", "websub_subscriptions"):
        op.drop_table(name)
