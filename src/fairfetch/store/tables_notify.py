"""Notification tables: readers, subscriptions, the outbox, digest items, publishers, ledger, sink.

The outbox is the heart of it: a row is written in the same transaction as the entries that cause
it, and its ``dedupe_key`` is unique (``item:<subscription>:<entry>`` or
``digest:<reader>:<schedule>:<issue>``), so a crash can neither lose a notification nor make two.
"""

from __future__ import annotations

import sqlalchemy as sa

from fairfetch.store.tables import metadata
from fairfetch.store.types import BindableText, UTCDateTime

notify_readers = sa.Table(
    "notify_readers",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("email", sa.Text, nullable=False, unique=True),
    sa.Column("tz", sa.Text, nullable=False, server_default="UTC"),
    sa.Column("created_at", UTCDateTime, nullable=False),
    #: consecutive hard (5xx) failures; reset by a delivery
    sa.Column("hard_failures", sa.Integer, nullable=False, server_default="0"),
    #: set after repeated hard failures: nothing more is attempted to this address
    sa.Column("flagged_at", UTCDateTime),
    #: secret in links that act for the reader as a whole (unsubscribe from a digest)
    sa.Column("token", sa.Text, nullable=False, unique=True),
)

notify_subscriptions = sa.Table(
    "notify_subscriptions",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column(
        "reader_id",
        sa.Integer,
        sa.ForeignKey("notify_readers.id", ondelete="CASCADE"),
        nullable=False,
    ),
    sa.Column(
        "feed_id", sa.Integer, sa.ForeignKey("feeds.id", ondelete="CASCADE"), nullable=False
    ),
    #: realtime | daily | weekly
    sa.Column("mode", sa.Text, nullable=False, server_default="realtime"),
    sa.Column("hour", sa.Integer, nullable=False, server_default="8"),
    #: 0 = Monday … 6 = Sunday (weekly only)
    sa.Column("weekday", sa.Integer, nullable=False, server_default="0"),
    sa.Column("only_categories", sa.JSON, nullable=False, server_default="[]"),
    sa.Column("except_categories", sa.JSON, nullable=False, server_default="[]"),
    #: pending (awaiting confirmation) | active | unsubscribed
    sa.Column("status", sa.Text, nullable=False, server_default="pending"),
    sa.Column("confirm_token", sa.Text, nullable=False, unique=True),
    sa.Column("manage_token", sa.Text, nullable=False, unique=True),
    sa.Column("created_at", UTCDateTime, nullable=False),
    sa.Column("confirmed_at", UTCDateTime),
    sa.Column("unsubscribed_at", UTCDateTime),
    sa.UniqueConstraint("reader_id", "feed_id"),
)

notify_outbox = sa.Table(
    "notify_outbox",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("dedupe_key", sa.Text, nullable=False, unique=True),
    #: confirm | item | digest
    sa.Column("kind", sa.Text, nullable=False),
    sa.Column(
        "reader_id",
        sa.Integer,
        sa.ForeignKey("notify_readers.id", ondelete="CASCADE"),
        nullable=False,
    ),
    sa.Column(
        "subscription_id",
        sa.Integer,
        sa.ForeignKey("notify_subscriptions.id", ondelete="CASCADE"),
    ),
    sa.Column("entry_id", sa.Integer, sa.ForeignKey("entries.id", ondelete="CASCADE")),
    #: digest schedule label, e.g. ``daily@08`` (digests only)
    sa.Column("schedule", sa.Text),
    #: pending | sent | failed | cancelled
    sa.Column("status", sa.Text, nullable=False, server_default="pending"),
    sa.Column("created_at", UTCDateTime, nullable=False),
    #: not sent before this (a digest's issue time; a retry's backoff)
    sa.Column("due_at", UTCDateTime, nullable=False),
    sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
    #: the mail server's reply: any bytes (aiosmtplib decodes it with surrogateescape)
    sa.Column("last_error", BindableText),
    sa.Column("message_id", sa.Text, nullable=False),
    sa.Column("subject", BindableText),
    sa.Column("sent_at", UTCDateTime),
    #: a digest issue stops taking items when it first goes on the wire (see issue_is_open)
    sa.Column("closed_at", UTCDateTime),
    sa.Index("ix_notify_outbox_status_due_at", "status", "due_at"),
    #: Confirmation mails sent to a reader lately (a cap per address a day): 0015.
    sa.Index("ix_notify_outbox_reader_kind_created", "reader_id", "kind", "created_at"),
)

notify_digest_items = sa.Table(
    "notify_digest_items",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column(
        "outbox_id",
        sa.Integer,
        sa.ForeignKey("notify_outbox.id", ondelete="CASCADE"),
        nullable=False,
        index=True,
    ),
    sa.Column(
        "subscription_id",
        sa.Integer,
        sa.ForeignKey("notify_subscriptions.id", ondelete="CASCADE"),
        nullable=False,
    ),
    sa.Column(
        "entry_id", sa.Integer, sa.ForeignKey("entries.id", ondelete="CASCADE"), nullable=False
    ),
    sa.UniqueConstraint("subscription_id", "entry_id"),
)

notify_publishers = sa.Table(
    "notify_publishers",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("name", sa.Text, nullable=False, unique=True),
    sa.Column("created_at", UTCDateTime, nullable=False),
)

notify_sponsorships = sa.Table(
    "notify_sponsorships",
    metadata,
    sa.Column(
        "feed_id",
        sa.Integer,
        sa.ForeignKey("feeds.id", ondelete="CASCADE"),
        primary_key=True,
    ),
    sa.Column(
        "publisher_id",
        sa.Integer,
        sa.ForeignKey("notify_publishers.id", ondelete="CASCADE"),
        nullable=False,
    ),
    sa.Column("since", UTCDateTime, nullable=False),
)

#: Grants (+) and charges (-). A charge names the outbox row it pays for; one party is charged at
#: most once per outbox row (unique ``charge_key``), so a resend after a crash costs nothing more.
notify_ledger = sa.Table(
    "notify_ledger",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("at", UTCDateTime, nullable=False),
    #: grant | charge
    sa.Column("kind", sa.Text, nullable=False),
    sa.Column(
        "publisher_id", sa.Integer, sa.ForeignKey("notify_publishers.id", ondelete="CASCADE")
    ),
    sa.Column("reader_id", sa.Integer, sa.ForeignKey("notify_readers.id", ondelete="CASCADE")),
    sa.Column("amount", sa.Integer, nullable=False),
    sa.Column("outbox_id", sa.Integer, sa.ForeignKey("notify_outbox.id", ondelete="SET NULL")),
    sa.Column("charge_key", sa.Text, unique=True),
    sa.Column("note", sa.Text, nullable=False, server_default=""),
)

#: Mails captured by the development SMTP sink (``fairfetch.notify.sink``), shown on /outbox.
notify_sink = sa.Table(
    "notify_sink",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("received_at", UTCDateTime, nullable=False),
    #: what an SMTP client sent, whatever it is
    sa.Column("mail_from", BindableText, nullable=False, server_default=""),
    sa.Column("rcpt_to", BindableText, nullable=False, server_default=""),
    sa.Column("subject", BindableText, nullable=False, server_default=""),
    sa.Column("message_id", BindableText, nullable=False, server_default=""),
    sa.Column("raw", BindableText, nullable=False),
)
