"""SQL of the WebSub job: subscriptions, the durable delivery queue and the ping log.

State changes go through :func:`fairfetch.websub.state.transition` inside the same transaction
that reads the current state, so a verification racing a renewal cannot write a state the machine
does not allow.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa

from fairfetch.store.refusals import refused
from fairfetch.store.sql import SqlStore
from fairfetch.store.tables import feeds
from fairfetch.store.tables_websub import websub_deliveries, websub_pings, websub_subscriptions
from fairfetch.websub.state import Event, transition

__all__ = [
    "DeliveryRecord",
    "SubscriptionRecord",
    "active_feed_ids",
    "apply_event",
    "claim_deliveries",
    "create_subscription",
    "delivery_counts",
    "enqueue_delivery",
    "feeds_to_subscribe",
    "finish_deliveries",
    "get_subscription",
    "latest_for_feed",
    "list_subscriptions",
    "ping_counts",
    "record_ping",
    "rejected_reasons",
    "stored_entry_ids",
    "subscription_by_token",
    "subscription_state_counts",
    "subscriptions_due",
    "subscriptions_to_unsubscribe",
    "update_subscription",
]

S = websub_subscriptions
D = websub_deliveries
P = websub_pings

#: Subscriptions that still count as "ours" for a feed (no new subscribe is started for it).
LIVE_STATES = ("pending", "active", "unsubscribing")


@dataclass(frozen=True)
class SubscriptionRecord:
    id: int
    feed_id: int | None
    hub_url: str
    topic_url: str
    callback_token: str
    secret: str
    state: str
    created_at: datetime
    updated_at: datetime
    requested_lease: int | None = None
    lease_seconds: int | None = None
    verified_at: datetime | None = None
    lease_expires_at: datetime | None = None
    next_action_at: datetime | None = None
    attempts: int = 0
    last_error: str | None = None
    denied_reason: str | None = None

    @classmethod
    def from_row(cls, row: Mapping[Any, Any]) -> SubscriptionRecord:
        names = cls.__dataclass_fields__
        return cls(**{k: v for k, v in row.items() if k in names})


@dataclass(frozen=True)
class DeliveryRecord:
    id: int
    subscription_id: int
    feed_id: int | None
    received_at: datetime
    body: bytes
    content_type: str
    attempts: int


def _one(conn: sa.Connection, sub_id: int) -> SubscriptionRecord | None:
    row = conn.execute(sa.select(S).where(S.c.id == sub_id)).mappings().first()
    return SubscriptionRecord.from_row(row) if row else None


@refused('creating a WebSub subscription to {topic_url!r} at hub {hub_url!r}')
def create_subscription(
    store: SqlStore,
    *,
    feed_id: int | None,
    hub_url: str,
    topic_url: str,
    secret: str,
    requested_lease: int | None,
    now: datetime,
) -> SubscriptionRecord:
    """A new subscription with a fresh, unguessable callback token (256 bits)."""
    token = secrets.token_urlsafe(32)
    with store.engine.begin() as conn:
        sub_id = conn.execute(
            S.insert()
            .values(
                feed_id=feed_id,
                hub_url=hub_url,
                topic_url=topic_url,
                callback_token=token,
                secret=secret,
                state="pending",
                requested_lease=requested_lease,
                attempts=0,
                created_at=now,
                updated_at=now,
            )
            .returning(S.c.id)
        ).scalar_one()
        rec = _one(conn, int(sub_id))
    assert rec is not None
    return rec


@refused('reading WebSub subscription {sub_id}')
def get_subscription(store: SqlStore, sub_id: int) -> SubscriptionRecord | None:
    with store.engine.connect() as conn:
        return _one(conn, sub_id)


@refused('reading the WebSub subscription of a callback')
def subscription_by_token(store: SqlStore, token: str) -> SubscriptionRecord | None:
    with store.engine.connect() as conn:
        row = conn.execute(sa.select(S).where(S.c.callback_token == token)).mappings().first()
    return SubscriptionRecord.from_row(row) if row else None


@refused('reading the WebSub subscription of feed {feed_id}')
def latest_for_feed(store: SqlStore, feed_id: int) -> SubscriptionRecord | None:
    """The feed's most recent subscription (the one ``feeds show`` describes)."""
    with store.engine.connect() as conn:
        row = (
            conn.execute(
                sa.select(S).where(S.c.feed_id == feed_id).order_by(S.c.id.desc()).limit(1)
            )
            .mappings()
            .first()
        )
    return SubscriptionRecord.from_row(row) if row else None


@refused('listing WebSub subscriptions')
def list_subscriptions(
    store: SqlStore, *, state: str | None = None, limit: int | None = None
) -> list[SubscriptionRecord]:
    q = sa.select(S).order_by(S.c.id)
    if state:
        q = q.where(S.c.state == state)
    if limit is not None:
        q = q.limit(limit)
    with store.engine.connect() as conn:
        return [SubscriptionRecord.from_row(r) for r in conn.execute(q).mappings()]


@refused('updating WebSub subscription {sub_id} ({event})')
def apply_event(
    store: SqlStore,
    sub_id: int,
    event: Event,
    now: datetime,
    *,
    unless_changed_since: datetime | None = None,
    **changes: Any,
) -> SubscriptionRecord:
    """Move a subscription through the state machine and write ``changes`` with it.

    ``unless_changed_since``: write nothing if the row changed after that time — the hub's
    verification (or denial) can arrive before its answer to our request does, and the hub's word
    is the newer one.

    Raises :class:`fairfetch.websub.state.InvalidTransition` (nothing written) when the event is
    not allowed in the current state, and LookupError when there is no such subscription.
    """
    # Compare-and-set: SQLite's driver reads outside the write transaction, so a plain
    # read-then-write could lose a concurrent verification. The UPDATE only applies if the row is
    # still what we read; otherwise read again and re-decide.
    for _ in range(20):
        with store.engine.begin() as conn:
            row = conn.execute(sa.select(S.c.state, S.c.updated_at).where(S.c.id == sub_id)).first()
            if row is None:
                raise LookupError(f"websub subscription {sub_id}")
            if unless_changed_since is not None and row.updated_at > unless_changed_since:
                rec = _one(conn, sub_id)
                assert rec is not None
                return rec
            new_state = transition(row.state, event)
            done = conn.execute(
                S.update()
                .where(S.c.id == sub_id, S.c.state == row.state, S.c.updated_at == row.updated_at)
                .values(state=new_state, updated_at=max(now, row.updated_at), **changes)
            ).rowcount
            if done:
                rec = _one(conn, sub_id)
                assert rec is not None
                return rec
    raise RuntimeError(f"websub subscription {sub_id}: too much contention")


@refused('updating WebSub subscription {sub_id}')
def update_subscription(store: SqlStore, sub_id: int, now: datetime, **changes: Any) -> None:
    """Bookkeeping that does not change the state (attempts, next_action_at, last_error)."""
    if "state" in changes:
        raise ValueError("state changes go through apply_event")
    with store.engine.begin() as conn:
        conn.execute(S.update().where(S.c.id == sub_id).values(updated_at=now, **changes))


@refused('listing the WebSub subscriptions due')
def subscriptions_due(
    store: SqlStore, now: datetime, *, limit: int = 500
) -> list[SubscriptionRecord]:
    """Subscriptions whose next action (renewal, retry, lapse check) is due."""
    q = (
        sa.select(S)
        .where(
            S.c.state.in_(("pending", "active", "expired", "unsubscribing")),
            S.c.next_action_at.is_not(None),
            S.c.next_action_at <= now,
        )
        .order_by(S.c.next_action_at, S.c.id)
        .limit(limit)
    )
    with store.engine.connect() as conn:
        return [SubscriptionRecord.from_row(r) for r in conn.execute(q).mappings()]


@refused('listing the WebSub subscriptions to end')
def subscriptions_to_unsubscribe(store: SqlStore, *, limit: int = 500) -> list[SubscriptionRecord]:
    """Live subscriptions whose feed was removed (feed_id NULL) or is dead."""
    dead = sa.select(feeds.c.id).where(feeds.c.status == "dead")
    q = (
        sa.select(S)
        .where(
            S.c.state.in_(("pending", "active", "denied", "expired")),
            sa.or_(S.c.feed_id.is_(None), S.c.feed_id.in_(dead)),
        )
        .order_by(S.c.id)
        .limit(limit)
    )
    with store.engine.connect() as conn:
        rows = [SubscriptionRecord.from_row(r) for r in conn.execute(q).mappings()]
    # A denied subscription never held a lease: there is nothing to undo at the hub.
    return [r for r in rows if r.state != "denied"]


@refused('listing the feeds to subscribe to over WebSub')
def feeds_to_subscribe(
    store: SqlStore, now: datetime, *, retry_denied_after: float, limit: int = 200
) -> list[tuple[int, str]]:
    """(feed id, url) of live feeds advertising a hub with no live subscription.

    A feed whose last subscription was denied, or expired after a failure, is tried again only
    after ``retry_denied_after`` seconds (its row's ``updated_at``), so a hub that refuses us is
    not hammered on every pass.
    """
    recent = now - timedelta(seconds=retry_denied_after)
    live = sa.select(S.c.feed_id).where(
        S.c.feed_id.is_not(None),
        sa.or_(
            S.c.state.in_(LIVE_STATES),
            sa.and_(S.c.state.in_(("denied", "expired")), S.c.updated_at > recent),
        ),
    )
    q = (
        sa.select(feeds.c.id, feeds.c.url)
        .where(
            feeds.c.status.in_(("ok", "error")),
            sa.cast(feeds.c.hub_urls, sa.Text).not_in(("[]", "null", "")),
            feeds.c.id.not_in(live),
        )
        .order_by(feeds.c.id)
        .limit(limit)
    )
    with store.engine.connect() as conn:
        return [(int(r.id), str(r.url)) for r in conn.execute(q)]


# --- deliveries ---------------------------------------------------------------------------------


@refused('queueing a WebSub delivery for subscription {sub.id}')
def enqueue_delivery(
    store: SqlStore,
    sub: SubscriptionRecord,
    body: bytes,
    content_type: str,
    now: datetime,
    *,
    ping_detail: str | None = None,
) -> int:
    """Store a verified delivery durably; committed before the hub gets its 2xx.

    With ``ping_detail`` the "accepted" ping is logged in the same transaction (one commit per
    ping on the hot path).
    """
    with store.engine.begin() as conn:
        if ping_detail is not None:
            conn.execute(P.insert().values(subscription_id=sub.id, feed_id=sub.feed_id, at=now,
                                           outcome="accepted", http_status=202,
                                           detail=ping_detail[:500]))
        did = conn.execute(
            D.insert()
            .values(
                subscription_id=sub.id,
                feed_id=sub.feed_id,
                received_at=now,
                body=body,
                content_type=content_type or "",
                status="queued",
                attempts=0,
            )
            .returning(D.c.id)
        ).scalar_one()
    return int(did)


@refused('claiming WebSub deliveries')
def claim_deliveries(
    store: SqlStore,
    now: datetime,
    *,
    limit: int = 100,
    stale_after: float = 600.0,
    ids: Sequence[int] | None = None,
) -> list[DeliveryRecord]:
    """Take queued deliveries (and ones a crashed processor left claimed) for processing."""
    stale = now - timedelta(seconds=stale_after)
    cond = sa.or_(
        D.c.status == "queued", sa.and_(D.c.status == "processing", D.c.claimed_at < stale)
    )
    with store.engine.begin() as conn:
        sel = sa.select(D.c.id).where(cond).order_by(D.c.id).limit(limit)
        if ids is not None:
            sel = sel.where(D.c.id.in_(list(ids)))
        if store.dialect == "postgresql":
            sel = sel.with_for_update(skip_locked=True)
        chosen = [int(r) for r in conn.execute(sel).scalars()]
        if not chosen:
            return []
        conn.execute(
            D.update()
            .where(D.c.id.in_(chosen), cond)
            .values(status="processing", claimed_at=now, attempts=D.c.attempts + 1)
        )
        rows = conn.execute(
            sa.select(D).where(D.c.id.in_(chosen), D.c.claimed_at == now).order_by(D.c.id)
        ).mappings()
        return [
            DeliveryRecord(
                id=int(r["id"]),
                subscription_id=int(r["subscription_id"]),
                feed_id=r["feed_id"],
                received_at=r["received_at"],
                body=bytes(r["body"]),
                content_type=r["content_type"],
                attempts=int(r["attempts"]),
            )
            for r in rows
        ]


@refused('recording the end of WebSub deliveries')
def finish_deliveries(
    store: SqlStore, ids: Sequence[int], now: datetime, *, status: str, error: str | None = None
) -> None:
    """``done``, ``failed`` (recorded with its reason), or back to ``queued`` for another try.

    A done delivery's body goes (a fat ping is up to 10 MB, read once by the processor: kept,
    every push grew the database for ever); a failed one's stays, for finding out why."""
    if not ids:
        return
    values: dict[str, Any] = {"status": status, "error": error}
    if status in ("done", "failed"):
        values["processed_at"] = now
    if status == "done":
        values["body"] = b""
    with store.engine.begin() as conn:
        conn.execute(D.update().where(D.c.id.in_(list(ids))).values(**values))


@refused('counting WebSub deliveries')
def delivery_counts(store: SqlStore) -> dict[str, int]:
    with store.engine.connect() as conn:
        return {
            str(s): int(n)
            for s, n in conn.execute(sa.select(D.c.status, sa.func.count()).group_by(D.c.status))
        }


# --- ping log -----------------------------------------------------------------------------------

#: Pings to unknown callback tokens within this span of the row's first share that row.
UNKNOWN_PINGS_ROW_SPAN = timedelta(minutes=1)


@refused('recording a WebSub ping')
def record_ping(
    store: SqlStore,
    *,
    subscription_id: int | None,
    feed_id: int | None,
    outcome: str,
    http_status: int,
    now: datetime,
    detail: str = "",
) -> None:
    with store.engine.begin() as conn:
        if outcome == "unknown" and subscription_id is None:
            # Posts to tokens we never issued (anyone may send them) are counted on one row a
            # minute: logged one by one, a stranger's loop grew the table without bound.
            latest = conn.execute(
                sa.select(sa.func.max(P.c.id)).where(
                    P.c.outcome == "unknown",
                    P.c.subscription_id.is_(None),
                    P.c.at > now - UNKNOWN_PINGS_ROW_SPAN,
                    P.c.at <= now,
                )
            ).scalar()
            if latest is not None:
                conn.execute(P.update().where(P.c.id == latest).values(pings=P.c.pings + 1))
                return
        conn.execute(
            P.insert().values(
                subscription_id=subscription_id,
                feed_id=feed_id,
                at=now,
                outcome=outcome,
                http_status=http_status,
                detail=detail[:500],
            )
        )


@refused('counting WebSub pings')
def ping_counts(store: SqlStore, since: datetime) -> dict[str, int]:
    with store.engine.connect() as conn:
        return {
            str(o): int(n)
            for o, n in conn.execute(
                sa.select(P.c.outcome, sa.func.sum(P.c.pings))
                .where(P.c.at >= since)
                .group_by(P.c.outcome)
            )
        }


@refused('counting rejected WebSub pings')
def rejected_reasons(store: SqlStore, since: datetime) -> dict[str, int]:
    """Rejected pings by reason (invalid, unknown_algorithm, unsigned, too_large)."""
    with store.engine.connect() as conn:
        return {
            str(d): int(n)
            for d, n in conn.execute(
                sa.select(P.c.detail, sa.func.sum(P.c.pings))
                .where(P.c.at >= since, P.c.outcome == "rejected")
                .group_by(P.c.detail)
            )
        }


@refused('listing the feeds with an active WebSub lease')
def active_feed_ids(store: SqlStore, now: datetime) -> set[int]:
    """Feeds with an active, unexpired lease: the crawler may poll these less often."""
    with store.engine.connect() as conn:
        return {
            int(r)
            for r in conn.execute(
                sa.select(S.c.feed_id).where(
                    S.c.state == "active", S.c.feed_id.is_not(None), S.c.lease_expires_at > now
                )
            ).scalars()
        }


@refused('reading the stored entries of feed {feed_id}')
def stored_entry_ids(store: SqlStore, feed_id: int, entry_ids: Sequence[str]) -> set[str]:
    """Which of these entry ids the feed already has stored (a 304 re-fetch lists none)."""
    from fairfetch.store.tables import entries
    from fairfetch.store.types import key_text

    # By the form the column stores (a very long id is stored shortened), answered in the
    # caller's own spelling.
    asked = {key_text(i): i for i in entry_ids}
    if not asked:
        return set()
    with store.engine.connect() as conn:
        return {
            asked[stored]
            for stored in conn.execute(
                sa.select(entries.c.entry_id).where(
                    entries.c.feed_id == feed_id, entries.c.entry_id.in_(list(asked))
                )
            ).scalars()
            if stored in asked
        }


@refused('counting WebSub subscriptions')
def subscription_state_counts(store: SqlStore) -> dict[str, int]:
    with store.engine.connect() as conn:
        return {
            str(s): int(n)
            for s, n in conn.execute(sa.select(S.c.state, sa.func.count()).group_by(S.c.state))
        }
