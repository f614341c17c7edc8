"""WebSub tables: subscriptions (one per feed and hub), the durable delivery queue, the ping log.

``websub_subscriptions.feed_id`` is SET NULL on delete, not CASCADE: when a feed is removed we
still owe its hub an unsubscribe, and the row (hub, topic, callback) is what we need to send it.
"""

from __future__ import annotations

import sqlalchemy as sa

from fairfetch.store.tables import WIDE_ID, metadata
from fairfetch.store.types import UTCDateTime

websub_subscriptions = sa.Table(
    "websub_subscriptions",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("feed_id", sa.Integer, sa.ForeignKey("feeds.id", ondelete="SET NULL"), index=True),
    sa.Column("hub_url", sa.Text, nullable=False),
    sa.Column("topic_url", sa.Text, nullable=False),
    sa.Column("callback_token", sa.Text, nullable=False, unique=True),
    sa.Column("secret", sa.Text, nullable=False),
    #: pending | active | denied | expired | unsubscribing | unsubscribed (websub/state.py)
    sa.Column("state", sa.Text, nullable=False, server_default="pending", index=True),
    sa.Column("requested_lease", sa.Integer),
    sa.Column("lease_seconds", sa.Integer),
    sa.Column("verified_at", UTCDateTime),
    sa.Column("lease_expires_at", UTCDateTime),
    #: When the service next acts on it: renewal of an active lease, retry of a failed request.
    sa.Column("next_action_at", UTCDateTime, index=True),
    sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
    sa.Column("last_error", sa.Text),
    sa.Column("denied_reason", sa.Text),
    sa.Column("created_at", UTCDateTime, nullable=False),
    sa.Column("updated_at", UTCDateTime, nullable=False),
)

websub_deliveries = sa.Table(
    "websub_deliveries",
    metadata,
    sa.Column("id", WIDE_ID, primary_key=True, autoincrement=True),  # 64-bit: 0013
    sa.Column(
        "subscription_id",
        sa.Integer,
        sa.ForeignKey("websub_subscriptions.id", ondelete="CASCADE"),
        nullable=False,
    ),
    sa.Column("feed_id", sa.Integer, sa.ForeignKey("feeds.id", ondelete="CASCADE")),
    sa.Column("received_at", UTCDateTime, nullable=False),
    sa.Column("body", sa.LargeBinary, nullable=False),
    sa.Column("content_type", sa.Text, nullable=False, server_default=""),
    #: queued | processing | done | failed
    sa.Column("status", sa.Text, nullable=False, server_default="queued", index=True),
    sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
    sa.Column("claimed_at", UTCDateTime),
    sa.Column("processed_at", UTCDateTime),
    sa.Column("error", sa.Text),
)

websub_pings = sa.Table(
    "websub_pings",
    metadata,
    sa.Column("id", WIDE_ID, primary_key=True, autoincrement=True),  # 64-bit: 0013
    sa.Column(
        "subscription_id",
        sa.Integer,
        sa.ForeignKey("websub_subscriptions.id", ondelete="SET NULL"),
    ),
    sa.Column("feed_id", sa.Integer, sa.ForeignKey("feeds.id", ondelete="SET NULL")),
    sa.Column("at", UTCDateTime, nullable=False, index=True),
    #: accepted | rejected | unsigned | ignored | retried | gone | unknown
    sa.Column("outcome", sa.Text, nullable=False),
    sa.Column("http_status", sa.Integer, nullable=False, server_default="0"),
    sa.Column("detail", sa.Text, nullable=False, server_default=""),
    #: Pings this row stands for: 1, except for ``unknown`` ones (no such callback token:
    #: anyone may post them), counted on one row a minute (0014).
    sa.Column("pings", sa.Integer, nullable=False, server_default="1"),
)
