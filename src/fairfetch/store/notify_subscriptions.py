"""SQL of notify's subscriptions: readers, sign-up and its confirmation, the management link,
unsubscribing, listings and bulk import.

Tokens are minted here and only here (:func:`new_token`), so every token a reader pastes obeys
the same rule."""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa

from fairfetch.errors import InputError, NotFoundError
from fairfetch.notify.schedule import schedule_label
from fairfetch.store.notify_outbox import insert_outbox
from fairfetch.store.sql import SqlStore
from fairfetch.store.tables import feeds
from fairfetch.store.tables_notify import (
    notify_outbox,
    notify_readers,
    notify_subscriptions,
)


def new_token() -> str:
    """URL-safe and never starting with "-": readers paste tokens into `notify confirm TOKEN`,
    where a leading dash reads as an option (one token in 64 made the command fail)."""
    while True:
        token = secrets.token_urlsafe(18)
        if not token.startswith("-"):
            return token


@dataclass(frozen=True)
class Subscribed:
    subscription: dict[str, Any]
    created: bool
    #: the confirmation mail's outbox id, None when none was queued (already active, or one was
    #: sent less than CONFIRM_RESEND_AFTER ago)
    confirm_outbox_id: int | None
    #: a confirmation mail went out recently, so none was queued (no mail-bombing via the form)
    throttled: bool = False


#: What an old confirmation link of an ended subscription answers.
SPENT_CONFIRMATION = (
    "confirmation token (that subscription was ended since; subscribe again for a new link)"
)

#: A pending subscription gets at most one confirmation mail per this interval, however often
#: the public form is posted for that address.
CONFIRM_RESEND_AFTER = timedelta(hours=1)


def _has_active(conn: sa.Connection, reader_id: int) -> bool:
    return conn.execute(
        sa.select(notify_subscriptions.c.id).where(
            notify_subscriptions.c.reader_id == reader_id,
            notify_subscriptions.c.status == "active",
        )
    ).first() is not None


def _reader(
    conn: sa.Connection, email: str, tz: str | None, now: datetime, *, update_active: bool = True
) -> dict[str, Any]:
    """The reader of ``email`` (created on first use). Its zone changes to ``tz`` unless
    ``update_active`` is False and it has a live subscription: the zone sets the hour of every
    digest it gets, and the public form must not move those."""
    q = sa.select(notify_readers).where(notify_readers.c.email == email)
    first = conn.execute(q).mappings().first()
    found: dict[str, Any] | None = dict(first) if first is not None else None
    if found is not None and not update_active and tz and found["tz"] != tz and _has_active(
        conn, found["id"]
    ):
        return found
    if found is None:
        conn.execute(
            notify_readers.insert().values(
                email=email, tz=tz or "UTC", created_at=now, hard_failures=0, token=new_token()
            )
        )
        found = dict(conn.execute(q).mappings().one())
    elif tz and found["tz"] != tz:
        conn.execute(
            notify_readers.update().where(notify_readers.c.id == found["id"]).values(tz=tz)
        )
        found = {**found, "tz": tz}
    return found


def _sub_by(conn: sa.Connection, clause: sa.ColumnElement[bool]) -> dict[str, Any] | None:
    row = conn.execute(sa.select(notify_subscriptions).where(clause)).mappings().first()
    return dict(row) if row is not None else None


def subscribe(
    store: SqlStore,
    email: str,
    feed_id: int,
    *,
    mode: str,
    hour: int,
    weekday: int,
    tz: str | None,
    only: Sequence[str],
    exclude: Sequence[str],
    now: datetime,
    update_active: bool = True,
) -> Subscribed:
    """Create (or renew) a pending subscription and queue its confirmation mail.

    An active subscription keeps working and gets the new settings when ``update_active`` (the
    CLI; the public web form passes False: a stranger must not change someone's subscription);
    a pending or unsubscribed one goes (back) to pending with a fresh confirmation token and a
    new confirmation mail, at most one per CONFIRM_RESEND_AFTER.
    """
    throttled = False
    with store.engine.begin() as conn:
        reader = _reader(conn, email, tz, now, update_active=update_active)
        values = {
            "mode": mode,
            "hour": hour,
            "weekday": weekday,
            "only_categories": list(only),
            "except_categories": list(exclude),
        }
        sub = _sub_by(
            conn,
            sa.and_(
                notify_subscriptions.c.reader_id == reader["id"],
                notify_subscriptions.c.feed_id == feed_id,
            ),
        )
        created = sub is None
        if sub is None:
            conn.execute(
                notify_subscriptions.insert().values(
                    reader_id=reader["id"],
                    feed_id=feed_id,
                    status="pending",
                    confirm_token=new_token(),
                    manage_token=new_token(),
                    created_at=now,
                    **values,
                )
            )
        elif sub["status"] == "active":
            if update_active:
                conn.execute(
                    notify_subscriptions.update()
                    .where(notify_subscriptions.c.id == sub["id"])
                    .values(**values)
                )
        elif (
            sub["status"] == "pending"
            and conn.execute(
                sa.select(notify_outbox.c.id).where(
                    notify_outbox.c.kind == "confirm",
                    notify_outbox.c.subscription_id == sub["id"],
                    notify_outbox.c.created_at > now - CONFIRM_RESEND_AFTER,
                )
            ).first()
            is not None
        ):
            throttled = True
            conn.execute(
                notify_subscriptions.update()
                .where(notify_subscriptions.c.id == sub["id"])
                .values(**values)
            )
        else:
            conn.execute(
                notify_subscriptions.update()
                .where(notify_subscriptions.c.id == sub["id"])
                .values(status="pending", confirm_token=new_token(), unsubscribed_at=None, **values)
            )
        sub = _sub_by(
            conn,
            sa.and_(
                notify_subscriptions.c.reader_id == reader["id"],
                notify_subscriptions.c.feed_id == feed_id,
            ),
        )
        assert sub is not None
        outbox_id = None
        if sub["status"] == "pending" and not throttled:
            outbox_id = insert_outbox(
                conn,
                dedupe_key=f"confirm:{sub['id']}:{sub['confirm_token']}",
                kind="confirm",
                reader_id=reader["id"],
                subscription_id=sub["id"],
                now=now,
                due_at=now,
            )
    return Subscribed(sub, created, outbox_id, throttled)


def confirm(store: SqlStore, token: str, now: datetime) -> dict[str, Any]:
    """Double opt-in: the link in the confirmation mail makes the subscription active.

    Confirming twice is harmless; entries first seen before this moment are never notified.
    A subscription that ended since spends its token: replaying an old confirmation link must
    not undo an unsubscribe (subscribing again mints a new token and mail).
    """
    with store.engine.begin() as conn:
        sub = _sub_by(conn, notify_subscriptions.c.confirm_token == token)
        if sub is None:
            raise NotFoundError("confirmation token")
        if sub["status"] == "unsubscribed":
            raise NotFoundError(SPENT_CONFIRMATION)
        if sub["status"] != "active":
            conn.execute(
                notify_subscriptions.update()
                .where(notify_subscriptions.c.id == sub["id"])
                .values(status="active", confirmed_at=now, unsubscribed_at=None)
            )
            sub = {**sub, "status": "active", "confirmed_at": now}
    return sub


def subscription_by_token(store: SqlStore, manage_token: str) -> dict[str, Any]:
    with store.engine.connect() as conn:
        q = listing_query().where(notify_subscriptions.c.manage_token == manage_token)
        row = conn.execute(q).mappings().first()
    if row is None:
        raise NotFoundError("subscription")
    return dict(row)


def update_subscription(
    store: SqlStore,
    manage_token: str,
    *,
    mode: str,
    hour: int,
    weekday: int,
    tz: str | None,
    only: Sequence[str],
    exclude: Sequence[str],
) -> None:
    with store.engine.begin() as conn:
        sub = _sub_by(conn, notify_subscriptions.c.manage_token == manage_token)
        if sub is None:
            raise NotFoundError("subscription")
        conn.execute(
            notify_subscriptions.update()
            .where(notify_subscriptions.c.id == sub["id"])
            .values(
                mode=mode,
                hour=hour,
                weekday=weekday,
                only_categories=list(only),
                except_categories=list(exclude),
            )
        )
        if tz:
            conn.execute(
                notify_readers.update().where(notify_readers.c.id == sub["reader_id"]).values(tz=tz)
            )


def _end(conn: sa.Connection, clause: sa.ColumnElement[bool], now: datetime) -> int:
    return int(
        conn.execute(
            notify_subscriptions.update()
            .where(clause, notify_subscriptions.c.status != "unsubscribed")
            .values(status="unsubscribed", unsubscribed_at=now)
        ).rowcount
    )


def unsubscribe(
    store: SqlStore,
    now: datetime,
    *,
    manage_token: str | None = None,
    email: str | None = None,
    feed_id: int | None = None,
    reader_token: str | None = None,
    schedule: str | None = None,
) -> int:
    """End subscriptions: by a subscription's token, by (email, feed), or a reader's digest.

    Returns how many were ended. Pending notifications of ended subscriptions are cancelled by
    the sender (recorded, not dropped silently).
    """
    with store.engine.begin() as conn:
        if manage_token is not None:
            return _end(conn, notify_subscriptions.c.manage_token == manage_token, now)
        if reader_token is not None:
            rid = conn.execute(
                sa.select(notify_readers.c.id).where(notify_readers.c.token == reader_token)
            ).scalar()
            if rid is None:
                return 0
            subs = conn.execute(
                sa.select(notify_subscriptions).where(notify_subscriptions.c.reader_id == rid)
            ).mappings()
            ids = [
                s["id"]
                for s in subs
                if schedule is None
                or (
                    s["mode"] != "realtime"
                    and schedule_label(s["mode"], s["hour"], s["weekday"]) == schedule
                )
            ]
            return _end(conn, notify_subscriptions.c.id.in_(ids), now) if ids else 0
        if email is None or feed_id is None:
            raise InputError("unsubscribe", "needs a token or an email and a feed")
        rid = conn.execute(
            sa.select(notify_readers.c.id).where(notify_readers.c.email == email)
        ).scalar()
        if rid is None:
            return 0
        return _end(
            conn,
            sa.and_(
                notify_subscriptions.c.reader_id == rid, notify_subscriptions.c.feed_id == feed_id
            ),
            now,
        )


def listing_query() -> sa.Select[Any]:
    return (
        sa.select(
            notify_subscriptions,
            notify_readers.c.email,
            notify_readers.c.tz,
            notify_readers.c.token.label("reader_token"),
            notify_readers.c.flagged_at,
            feeds.c.url.label("feed_url"),
            feeds.c.title.label("feed_title"),
        )
        .join(notify_readers, notify_readers.c.id == notify_subscriptions.c.reader_id)
        .join(feeds, feeds.c.id == notify_subscriptions.c.feed_id)
    )


def list_subscriptions(store: SqlStore) -> list[dict[str, Any]]:
    q = listing_query().order_by(notify_readers.c.email, notify_subscriptions.c.id)
    with store.engine.connect() as conn:
        return [dict(r) for r in conn.execute(q).mappings()]


def reader_exists(store: SqlStore, reader_token: str) -> bool:
    with store.engine.connect() as conn:
        return (
            conn.execute(
                sa.select(notify_readers.c.id).where(notify_readers.c.token == reader_token)
            ).first()
            is not None
        )


def import_subscriptions(
    store: SqlStore,
    rows: Sequence[dict[str, Any]],
    now: datetime,
) -> int:
    """Bulk-import subscriptions that were already confirmed elsewhere (a list moved from another
    service, the benchmarks): each row has ``email``, ``feed_id`` and optionally ``mode``,
    ``hour``, ``weekday``, ``tz``, ``only``, ``exclude``. Existing (reader, feed) pairs are kept.
    Returns the number created. Not for sign-ups: those go through :func:`subscribe`."""
    created = 0
    with store.engine.begin() as conn:
        readers = {
            r.email: r.id
            for r in conn.execute(sa.select(notify_readers.c.email, notify_readers.c.id))
        }
        new_readers = []
        for row in rows:
            if row["email"] not in readers:
                readers[row["email"]] = -1
                new_readers.append(
                    {
                        "email": row["email"],
                        "tz": row.get("tz") or "UTC",
                        "created_at": now,
                        "hard_failures": 0,
                        "token": new_token(),
                    }
                )
        if new_readers:
            conn.execute(notify_readers.insert(), new_readers)
            readers = {
                r.email: r.id
                for r in conn.execute(sa.select(notify_readers.c.email, notify_readers.c.id))
            }
        have = {
            (r.reader_id, r.feed_id)
            for r in conn.execute(
                sa.select(notify_subscriptions.c.reader_id, notify_subscriptions.c.feed_id)
            )
        }
        subs = []
        for row in rows:
            key = (readers[row["email"]], row["feed_id"])
            if key in have:
                continue
            have.add(key)
            subs.append(
                {
                    "reader_id": key[0],
                    "feed_id": key[1],
                    "mode": row.get("mode", "realtime"),
                    "hour": row.get("hour", 8),
                    "weekday": row.get("weekday", 0),
                    "only_categories": list(row.get("only", [])),
                    "except_categories": list(row.get("exclude", [])),
                    "status": "active",
                    "confirm_token": new_token(),
                    "manage_token": new_token(),
                    "created_at": now,
                    "confirmed_at": now,
                }
            )
        for i in range(0, len(subs), 1000):
            conn.execute(notify_subscriptions.insert(), subs[i : i + 1000])
        created = len(subs)
    return created


def feed_duplicate_of(store: SqlStore, feed_id: int) -> int | None:
    """``feeds.duplicate_of`` of one feed (``feeds show``)."""
    with store.engine.connect() as conn:
        found = conn.execute(
            sa.select(feeds.c.duplicate_of).where(feeds.c.id == feed_id)
        ).scalar()
    return None if found is None else int(found)
