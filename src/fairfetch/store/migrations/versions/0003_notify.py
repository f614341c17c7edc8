"""Notify tables: readers, subscriptions, outbox, digest items, publishers, sponsorships, ledger,
sink.

Revision ID: 0003_notify
Revises: 0001_core
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from fairfetch.store.types import UTCDateTime

revision = "0003_notify"
down_revision = "0001_core"
branch_labels = ("notify",)
depends_on = None


def _fk(col: str, table: str, owner: str, ondelete: str = "CASCADE") -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        [col], [f"{table}.id"], name=f"fk_{owner}_{col}_{table}", ondelete=ondelete
    )


def upgrade() -> None:
    op.create_table(
        "notify_readers",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("email", sa.Text, nullable=False),
        sa.Column("tz", sa.Text, nullable=False, server_default="UTC"),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("hard_failures", sa.Integer, nullable=False, server_default="0"),
        sa.Column("flagged_at", UTCDateTime),
        sa.Column("token", sa.Text, nullable=False),
        sa.UniqueConstraint("email", name="uq_notify_readers_email"),
        sa.UniqueConstraint("token", name="uq_notify_readers_token"),
    )
    op.create_table(
        "notify_subscriptions",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("reader_id", sa.Integer, nullable=False),
        sa.Column("feed_id", sa.Integer, nullable=False),
        sa.Column("mode", sa.Text, nullable=False, server_default="realtime"),
        sa.Column("hour", sa.Integer, nullable=False, server_default="8"),
        sa.Column("weekday", sa.Integer, nullable=False, server_default="0"),
        sa.Column("only_categories", sa.JSON, nullable=False, server_default="[]"),
        sa.Column("except_categories", sa.JSON, nullable=False, server_default="[]"),
        sa.Column("status", sa.Text, nullable=False, server_default="pending"),
        sa.Column("confirm_token", sa.Text, nullable=False),
        sa.Column("manage_token", sa.Text, nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("confirmed_at", UTCDateTime),
        sa.Column("unsubscribed_at", UTCDateTime),
        _fk("reader_id", "notify_readers", "notify_subscriptions"),
        _fk("feed_id", "feeds", "notify_subscriptions"),
        sa.UniqueConstraint(
            "reader_id", "feed_id", name="uq_notify_subscriptions_reader_id_feed_id"
        ),
        sa.UniqueConstraint("confirm_token", name="uq_notify_subscriptions_confirm_token"),
        sa.UniqueConstraint("manage_token", name="uq_notify_subscriptions_manage_token"),
    )
    op.create_table(
        "notify_outbox",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("dedupe_key", sa.Text, nullable=False),
        sa.Column("kind", sa.Text, nullable=False),
        sa.Column("reader_id", sa.Integer, nullable=False),
        sa.Column("subscription_id", sa.Integer),
        sa.Column("entry_id", sa.Integer),
        sa.Column("schedule", sa.Text),
        sa.Column("status", sa.Text, nullable=False, server_default="pending"),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("due_at", UTCDateTime, nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
        sa.Column("last_error", sa.Text),
        sa.Column("message_id", sa.Text, nullable=False),
        sa.Column("subject", sa.Text),
        sa.Column("sent_at", UTCDateTime),
        _fk("reader_id", "notify_readers", "notify_outbox"),
        _fk("subscription_id", "notify_subscriptions", "notify_outbox"),
        _fk("entry_id", "entries", "notify_outbox"),
        sa.UniqueConstraint("dedupe_key", name="uq_notify_outbox_dedupe_key"),
    )
    op.create_index("ix_notify_outbox_status_due_at", "notify_outbox", ["status", "due_at"])
    op.create_table(
        "notify_digest_items",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("outbox_id", sa.Integer, nullable=False),
        sa.Column("subscription_id", sa.Integer, nullable=False),
        sa.Column("entry_id", sa.Integer, nullable=False),
        _fk("outbox_id", "notify_outbox", "notify_digest_items"),
        _fk("subscription_id", "notify_subscriptions", "notify_digest_items"),
        _fk("entry_id", "entries", "notify_digest_items"),
        sa.UniqueConstraint(
            "subscription_id", "entry_id", name="uq_notify_digest_items_subscription_id_entry_id"
        ),
    )
    op.create_index("ix_notify_digest_items_outbox_id", "notify_digest_items", ["outbox_id"])
    op.create_table(
        "notify_publishers",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("name", sa.Text, nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.UniqueConstraint("name", name="uq_notify_publishers_name"),
    )
    op.create_table(
        "notify_sponsorships",
        sa.Column("feed_id", sa.Integer, primary_key=True),
        sa.Column("publisher_id", sa.Integer, nullable=False),
        sa.Column("since", UTCDateTime, nullable=False),
        _fk("feed_id", "feeds", "notify_sponsorships"),
        _fk("publisher_id", "notify_publishers", "notify_sponsorships"),
    )
    op.create_table(
        "notify_ledger",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("at", UTCDateTime, nullable=False),
        sa.Column("kind", sa.Text, nullable=False),
        sa.Column("publisher_id", sa.Integer),
        sa.Column("reader_id", sa.Integer),
        sa.Column("amount", sa.Integer, nullable=False),
        sa.Column("outbox_id", sa.Integer),
        sa.Column("charge_key", sa.Text),
        sa.Column("note", sa.Text, nullable=False, server_default=""),
        _fk("publisher_id", "notify_publishers", "notify_ledger"),
        _fk("reader_id", "notify_readers", "notify_ledger"),
        _fk("outbox_id", "notify_outbox", "notify_ledger", ondelete="SET NULL"),
        sa.UniqueConstraint("charge_key", name="uq_notify_ledger_charge_key"),
    )
    op.create_table(
        "notify_sink",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("received_at", UTCDateTime, nullable=False),
        sa.Column("mail_from", sa.Text, nullable=False, server_default=""),
        sa.Column("rcpt_to", sa.Text, nullable=False, server_default=""),
        sa.Column("subject", sa.Text, nullable=False, server_default=""),
        sa.Column("message_id", sa.Text, nullable=False, server_default=""),
        sa.Column("raw", sa.Text, nullable=False),
    )


def downgrade() -> None:
    for name in (
        "notify_sink",
        "notify_ledger",
        "notify_sponsorships",
        "notify_publishers",
        "notify_digest_items",
        "notify_outbox",
        "notify_subscriptions",
        "notify_readers",
    ):
        op.drop_table(name)
