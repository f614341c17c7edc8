"""SQL of the notify job: subscriptions, the outbox (enqueued inside the crawler's transaction),
digest issues, the credit ledger and the development mail sink.

Importing this module registers :func:`enqueue_new_entries` as a new-entries hook, so whoever opens
a store for crawling must import it (``fairfetch.store`` does).
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa

from fairfetch.config import Settings
from fairfetch.errors import InputError, NotFoundError
from fairfetch.notify.billing import Charge
from fairfetch.notify.filters import CategoryFilter
from fairfetch.notify.newness import identity_variants, is_news
from fairfetch.notify.options import NotifyOptions
from fairfetch.notify.schedule import next_issue, schedule_label
from fairfetch.store.hooks import register_new_entries_hook
from fairfetch.store.sql import SqlStore
from fairfetch.store.tables import entries, feeds
from fairfetch.store.tables_notify import (
    notify_digest_items,
    notify_ledger,
    notify_outbox,
    notify_publishers,
    notify_readers,
    notify_sink,
    notify_sponsorships,
    notify_subscriptions,
)

__all__ = [
    "Subscribed",
    "balances",
    "cancel",
    "confirm",
    "digest_context",
    "due_outbox",
    "enqueue_new_entries",
    "grant",
    "item_context",
    "ledger",
    "list_outbox",
    "list_sink",
    "list_subscriptions",
    "mark_failed",
    "mark_sent",
    "mark_temporary",
    "record_sink",
    "subscribe",
    "unsubscribe",
]

_CHUNK = 400


def _token() -> str:
    """URL-safe and never starting with "-": readers paste tokens into `notify confirm TOKEN`,
    where a leading dash reads as an option (one token in 64 made the command fail)."""
    while True:
        token = secrets.token_urlsafe(18)
        if not token.startswith("-"):
            return token


def _message_local() -> str:
    """The left part of a Message-ID, fixed when the outbox row is written (stable on resend)."""
    return secrets.token_hex(12)


# --- subscriptions ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Subscribed:
    subscription: dict[str, Any]
    created: bool
    #: the confirmation mail's outbox id, None when none was queued (already active, or one was
    #: sent less than CONFIRM_RESEND_AFTER ago)
    confirm_outbox_id: int | None
    #: a confirmation mail went out recently, so none was queued (no mail-bombing via the form)
    throttled: bool = False


#: A pending subscription gets at most one confirmation mail per this interval, however often
#: the public form is posted for that address.
CONFIRM_RESEND_AFTER = timedelta(hours=1)


def _reader(conn: sa.Connection, email: str, tz: str | None, now: datetime) -> dict[str, Any]:
    q = sa.select(notify_readers).where(notify_readers.c.email == email)
    first = conn.execute(q).mappings().first()
    found: dict[str, Any] | None = dict(first) if first is not None else None
    if found is None:
        conn.execute(
            notify_readers.insert().values(
                email=email, tz=tz or "UTC", created_at=now, hard_failures=0, token=_token()
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
        reader = _reader(conn, email, tz, now)
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
                    confirm_token=_token(),
                    manage_token=_token(),
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
        elif sub["status"] == "pending" and conn.execute(
            sa.select(notify_outbox.c.id).where(
                notify_outbox.c.kind == "confirm",
                notify_outbox.c.subscription_id == sub["id"],
                notify_outbox.c.created_at > now - CONFIRM_RESEND_AFTER,
            )
        ).first() is not None:
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
                .values(status="pending", confirm_token=_token(), unsubscribed_at=None, **values)
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
            outbox_id = _insert_outbox(
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
    """
    with store.engine.begin() as conn:
        sub = _sub_by(conn, notify_subscriptions.c.confirm_token == token)
        if sub is None:
            raise NotFoundError("confirmation token")
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
        q = _listing_query().where(notify_subscriptions.c.manage_token == manage_token)
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


def _listing_query() -> sa.Select[Any]:
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
    q = _listing_query().order_by(notify_readers.c.email, notify_subscriptions.c.id)
    with store.engine.connect() as conn:
        return [dict(r) for r in conn.execute(q).mappings()]


# --- the outbox hook ----------------------------------------------------------------------------


def _insert_outbox(
    conn: sa.Connection,
    *,
    dedupe_key: str,
    kind: str,
    reader_id: int,
    now: datetime,
    due_at: datetime,
    subscription_id: int | None = None,
    entry_id: int | None = None,
    schedule: str | None = None,
) -> int:
    """Insert one outbox row unless its dedupe key exists; returns the row id either way."""
    found = conn.execute(
        sa.select(notify_outbox.c.id).where(notify_outbox.c.dedupe_key == dedupe_key)
    ).scalar()
    if found is not None:
        return int(found)
    return int(
        conn.execute(
            notify_outbox.insert()
            .values(
                dedupe_key=dedupe_key,
                kind=kind,
                reader_id=reader_id,
                subscription_id=subscription_id,
                entry_id=entry_id,
                schedule=schedule,
                status="pending",
                created_at=now,
                due_at=due_at,
                attempts=0,
                message_id=_message_local(),
            )
            .returning(notify_outbox.c.id)
        ).scalar_one()
    )


def _news_entries(
    conn: sa.Connection,
    feed_id: int,
    entry_ids: Sequence[int],
    now: datetime,
    options: NotifyOptions,
) -> list[dict[str, Any]]:
    """The new rows that are news: not republished old items, not an old item under a new id."""
    newest = conn.execute(sa.select(feeds.c.newest_entry_at).where(feeds.c.id == feed_id)).scalar()
    rows: list[dict[str, Any]] = []
    for i in range(0, len(entry_ids), _CHUNK):
        part = list(entry_ids[i : i + _CHUNK])
        rows.extend(
            dict(r)
            for r in conn.execute(
                sa.select(
                    entries.c.id,
                    entries.c.entry_id,
                    entries.c.title,
                    entries.c.published,
                    entries.c.updated,
                    entries.c.categories,
                ).where(entries.c.id.in_(part))
            ).mappings()
        )
    fresh = [
        r
        for r in rows
        if is_news(
            r["published"] or r["updated"],
            feed_newest=newest,
            seen_at=now,
            limits=options.newness,
        )
    ]
    if not fresh:
        return []
    new_set = set(entry_ids)
    variants: dict[str, int] = {}
    for r in fresh:
        for v in identity_variants(r["entry_id"])[1:]:
            variants[v] = r["id"]
    dupes: set[int] = set()
    names = list(variants)
    for i in range(0, len(names), _CHUNK):
        for other in conn.execute(
            sa.select(entries.c.id, entries.c.entry_id).where(
                entries.c.feed_id == feed_id, entries.c.entry_id.in_(names[i : i + _CHUNK])
            )
        ):
            if other.id not in new_set:
                dupes.add(variants[other.entry_id])
    dated = [r for r in fresh if r["published"] is not None and r["title"]]
    if dated:
        pubs = sorted({r["published"] for r in dated})
        seen = {
            (o.title, o.published)
            for o in conn.execute(
                sa.select(entries.c.id, entries.c.title, entries.c.published).where(
                    entries.c.feed_id == feed_id, entries.c.published.in_(pubs[:_CHUNK])
                )
            )
            if o.id not in new_set
        }
        dupes.update(r["id"] for r in dated if (r["title"], r["published"]) in seen)
    return [r for r in fresh if r["id"] not in dupes]


def enqueue_new_entries(
    conn: sa.Connection,
    feed_id: int,
    entry_ids: Sequence[int],
    now: datetime,
    first_crawl: bool,
    *,
    options: NotifyOptions | None = None,
) -> int:
    """The new-entries hook: outbox rows for active subscribers, in the crawler's transaction.

    A feed's first crawl is its backlog (nobody is notified). Real-time subscriptions get one row
    per entry; digest subscriptions add the entry to their next issue that is still open. Returns
    the number of (item or digest-item) notifications queued.
    """
    if first_crawl or not entry_ids:
        return 0
    subs = [
        dict(r)
        for r in conn.execute(
            sa.select(notify_subscriptions, notify_readers.c.tz)
            .join(notify_readers, notify_readers.c.id == notify_subscriptions.c.reader_id)
            .where(
                notify_subscriptions.c.feed_id == feed_id,
                notify_subscriptions.c.status == "active",
            )
        ).mappings()
    ]
    if not subs:
        return 0
    news = _news_entries(conn, feed_id, entry_ids, now, options or NotifyOptions.from_env())
    if not news:
        return 0
    # Set-wise, not per subscription: a feed with thousands of readers must not hold the crawl's
    # write transaction for long. Existence checks make a replayed hook add nothing.
    filters: dict[tuple[tuple[str, ...], tuple[str, ...]], CategoryFilter] = {}
    realtime: list[tuple[dict[str, Any], dict[str, Any]]] = []
    digest: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
    for sub in subs:
        fkey = (tuple(sub["only_categories"] or ()), tuple(sub["except_categories"] or ()))
        flt = filters.get(fkey)
        if flt is None:
            flt = filters[fkey] = CategoryFilter.of(*fkey)
        wanted = [e for e in news if flt.accepts(e["categories"])]
        if not wanted:
            continue
        if sub["mode"] == "realtime":
            realtime.extend((sub, e) for e in wanted)
        else:
            digest.append((sub, wanted))
    return _enqueue_realtime(conn, realtime, now) + _enqueue_digest(conn, digest, now)


def _existing_keys(conn: sa.Connection, keys: Sequence[str]) -> dict[str, tuple[int, str]]:
    found: dict[str, tuple[int, str]] = {}
    for i in range(0, len(keys), _CHUNK):
        for r in conn.execute(
            sa.select(
                notify_outbox.c.dedupe_key, notify_outbox.c.id, notify_outbox.c.status
            ).where(notify_outbox.c.dedupe_key.in_(keys[i : i + _CHUNK]))
        ):
            found[r.dedupe_key] = (int(r.id), str(r.status))
    return found


def _outbox_row(key: str, kind: str, reader_id: int, now: datetime, due_at: datetime,
                **extra: Any) -> dict[str, Any]:
    return {
        "dedupe_key": key,
        "kind": kind,
        "reader_id": reader_id,
        "subscription_id": extra.get("subscription_id"),
        "entry_id": extra.get("entry_id"),
        "schedule": extra.get("schedule"),
        "status": "pending",
        "created_at": now,
        "due_at": due_at,
        "attempts": 0,
        "message_id": _message_local(),
    }


def _enqueue_realtime(
    conn: sa.Connection, pairs: Sequence[tuple[dict[str, Any], dict[str, Any]]], now: datetime
) -> int:
    if not pairs:
        return 0
    keyed = {f"item:{sub['id']}:{e['id']}": (sub, e) for sub, e in pairs}
    have = _existing_keys(conn, list(keyed))
    rows = [
        _outbox_row(key, "item", sub["reader_id"], now, now, subscription_id=sub["id"],
                    entry_id=e["id"])
        for key, (sub, e) in keyed.items()
        if key not in have
    ]
    for i in range(0, len(rows), 1000):
        conn.execute(notify_outbox.insert(), rows[i : i + 1000])
    return len(rows)


def _issue_key(sub: dict[str, Any], issue: datetime) -> str:
    label = schedule_label(sub["mode"], sub["hour"], sub["weekday"])
    return f"digest:{sub['reader_id']}:{label}:{issue.strftime('%Y-%m-%dT%H:%MZ')}"


def _enqueue_digest(
    conn: sa.Connection, subs: Sequence[tuple[dict[str, Any], list[dict[str, Any]]]],
    now: datetime,
) -> int:
    if not subs:
        return 0
    issues: dict[tuple[str, int, int, str], datetime] = {}
    first: dict[str, tuple[dict[str, Any], datetime]] = {}
    sub_key: dict[int, str] = {}
    for sub, _wanted in subs:
        sched = (sub["mode"], sub["hour"], sub["weekday"], sub["tz"])
        issue = issues.get(sched)
        if issue is None:
            issue = issues[sched] = next_issue(now, *sched)
        key = _issue_key(sub, issue)
        sub_key[sub["id"]] = key
        first.setdefault(key, (sub, issue))
    have = _existing_keys(conn, list(first))
    new_rows = [
        _outbox_row(key, "digest", sub["reader_id"], now, issue,
                    schedule=schedule_label(sub["mode"], sub["hour"], sub["weekday"]))
        for key, (sub, issue) in first.items()
        if key not in have
    ]
    for i in range(0, len(new_rows), 1000):
        conn.execute(notify_outbox.insert(), new_rows[i : i + 1000])
    if new_rows:
        have.update(_existing_keys(conn, [r["dedupe_key"] for r in new_rows]))
    issue_of: dict[int, int] = {}
    for sub, _wanted in subs:
        oid, status = have[sub_key[sub["id"]]]
        # an issue already sent (or on the wire) is never added to: the next open one is
        issue_of[sub["id"]] = oid if status == "pending" else _open_issue(conn, sub, now)
    sub_ids = sorted(issue_of)
    entry_set = sorted({e["id"] for _sub, wanted in subs for e in wanted})
    present: set[tuple[int, int]] = set()
    for i in range(0, len(sub_ids), _CHUNK):
        for j in range(0, len(entry_set), _CHUNK):
            present.update(
                (r.subscription_id, r.entry_id)
                for r in conn.execute(
                    sa.select(
                        notify_digest_items.c.subscription_id, notify_digest_items.c.entry_id
                    ).where(
                        notify_digest_items.c.subscription_id.in_(sub_ids[i : i + _CHUNK]),
                        notify_digest_items.c.entry_id.in_(entry_set[j : j + _CHUNK]),
                    )
                )
            )
    items = [
        {"outbox_id": issue_of[sub["id"]], "subscription_id": sub["id"], "entry_id": e["id"]}
        for sub, wanted in subs
        for e in wanted
        if (sub["id"], e["id"]) not in present
    ]
    for i in range(0, len(items), 1000):
        conn.execute(notify_digest_items.insert(), items[i : i + 1000])
    return len(items)


def _open_issue(conn: sa.Connection, sub: dict[str, Any], now: datetime) -> int:
    """The outbox row of the next issue of this subscription's digest still pending.

    An issue already sent (or being closed) is never added to: the entry goes to the next one.
    """
    label = schedule_label(sub["mode"], sub["hour"], sub["weekday"])
    after = now
    for _ in range(1000):
        issue = next_issue(after, sub["mode"], sub["hour"], sub["weekday"], sub["tz"])
        key = f"digest:{sub['reader_id']}:{label}:{issue.strftime('%Y-%m-%dT%H:%MZ')}"
        row = conn.execute(
            sa.select(notify_outbox.c.id, notify_outbox.c.status).where(
                notify_outbox.c.dedupe_key == key
            )
        ).first()
        if row is None:
            return _insert_outbox(
                conn,
                dedupe_key=key,
                kind="digest",
                reader_id=sub["reader_id"],
                now=now,
                due_at=issue,
                schedule=label,
            )
        if row.status == "pending":
            return int(row.id)
        after = issue
    raise AssertionError("no open digest issue within 1000 issues")


def _hook(
    conn: sa.Connection,
    feed_id: int,
    entry_ids: Sequence[int],
    now: datetime,
    first_crawl: bool,
    settings: Settings | None,
) -> None:
    options = NotifyOptions.from_settings(settings) if settings is not None else None
    enqueue_new_entries(conn, feed_id, entry_ids, now, first_crawl, options=options)


register_new_entries_hook(_hook)


# --- the sender's side --------------------------------------------------------------------------


def due_outbox(
    store: SqlStore, now: datetime, limit: int, *, ids: Sequence[int] | None = None
) -> list[dict[str, Any]]:
    """Pending rows due now, oldest first (by insertion), so a backlog drains in order."""
    q = (
        sa.select(
            notify_outbox,
            notify_readers.c.email,
            notify_readers.c.flagged_at,
            notify_readers.c.hard_failures,
        )
        .join(notify_readers, notify_readers.c.id == notify_outbox.c.reader_id)
        .where(notify_outbox.c.status == "pending", notify_outbox.c.due_at <= now)
        .order_by(notify_outbox.c.id)
        .limit(limit)
    )
    if ids is not None:
        q = q.where(notify_outbox.c.id.in_(list(ids) or [-1]))
    with store.engine.connect() as conn:
        return [dict(r) for r in conn.execute(q).mappings()]


def count_pending(store: SqlStore) -> dict[str, int]:
    q = sa.select(notify_outbox.c.status, sa.func.count()).group_by(notify_outbox.c.status)
    with store.engine.connect() as conn:
        return {s: int(n) for s, n in conn.execute(q)}


def _sponsor_map(conn: sa.Connection, feed_ids: Iterable[int]) -> dict[int, int]:
    ids = sorted(set(feed_ids))
    if not ids:
        return {}
    return {
        r.feed_id: r.publisher_id
        for r in conn.execute(
            sa.select(notify_sponsorships.c.feed_id, notify_sponsorships.c.publisher_id).where(
                notify_sponsorships.c.feed_id.in_(ids)
            )
        )
    }


def _balances(conn: sa.Connection, publisher_ids: Iterable[int]) -> dict[int, int]:
    ids = sorted(set(publisher_ids))
    if not ids:
        return {}
    out = dict.fromkeys(ids, 0)
    for pid, total in conn.execute(
        sa.select(notify_ledger.c.publisher_id, sa.func.sum(notify_ledger.c.amount))
        .where(notify_ledger.c.publisher_id.in_(ids))
        .group_by(notify_ledger.c.publisher_id)
    ):
        out[int(pid)] = int(total or 0)
    return out


def balances(store: SqlStore) -> list[dict[str, Any]]:
    """Every publisher with its balance and sponsored feeds."""
    with store.engine.connect() as conn:
        pubs = [dict(r) for r in conn.execute(sa.select(notify_publishers)).mappings()]
        bal = _balances(conn, [p["id"] for p in pubs])
        for p in pubs:
            p["balance"] = bal.get(p["id"], 0)
            p["feeds"] = [
                r.url
                for r in conn.execute(
                    sa.select(feeds.c.url)
                    .join(notify_sponsorships, notify_sponsorships.c.feed_id == feeds.c.id)
                    .where(notify_sponsorships.c.publisher_id == p["id"])
                    .order_by(feeds.c.id)
                )
            ]
    return pubs


def item_context(store: SqlStore, outbox_id: int) -> dict[str, Any] | None:
    """Everything the item and confirmation templates need, plus billing inputs."""
    with store.engine.connect() as conn:
        box = (
            conn.execute(sa.select(notify_outbox).where(notify_outbox.c.id == outbox_id))
            .mappings()
            .first()
        )
        if box is None or box["subscription_id"] is None:
            return None
        sub = (
            conn.execute(
                _listing_query().where(notify_subscriptions.c.id == box["subscription_id"])
            )
            .mappings()
            .first()
        )
        if sub is None:
            return None
        feed = conn.execute(sa.select(feeds).where(feeds.c.id == sub["feed_id"])).mappings().one()
        entry = None
        if box["entry_id"] is not None:
            entry = (
                conn.execute(sa.select(entries).where(entries.c.id == box["entry_id"]))
                .mappings()
                .first()
            )
        sponsors = _sponsor_map(conn, [sub["feed_id"]])
        bal = _balances(conn, sponsors.values())
    return {
        "outbox": dict(box),
        "subscription": dict(sub),
        "feed": dict(feed),
        "entry": dict(entry) if entry is not None else None,
        "sponsors": sponsors,
        "balances": bal,
    }


def item_contexts(store: SqlStore, outbox_ids: Sequence[int]) -> dict[int, dict[str, Any]]:
    """:func:`item_context` for a batch of rows in a handful of queries (the sender's hot path).

    Balances are not included: they change with every charged mail, so the sender reads them
    per message with :func:`publisher_balances`.
    """
    ids = list(outbox_ids)
    if not ids:
        return {}
    with store.engine.connect() as conn:
        boxes = {
            r["id"]: dict(r)
            for r in conn.execute(
                sa.select(notify_outbox).where(notify_outbox.c.id.in_(ids))
            ).mappings()
        }
        sub_ids = {b["subscription_id"] for b in boxes.values() if b["subscription_id"]}
        subs = {
            r["id"]: dict(r)
            for r in conn.execute(
                _listing_query().where(notify_subscriptions.c.id.in_(sorted(sub_ids) or [-1]))
            ).mappings()
        }
        feed_ids = {s["feed_id"] for s in subs.values()}
        feed_rows = {
            r["id"]: dict(r)
            for r in conn.execute(
                sa.select(feeds).where(feeds.c.id.in_(sorted(feed_ids) or [-1]))
            ).mappings()
        }
        entry_ids = {b["entry_id"] for b in boxes.values() if b["entry_id"]}
        entry_rows = {
            r["id"]: dict(r)
            for r in conn.execute(
                sa.select(entries).where(entries.c.id.in_(sorted(entry_ids) or [-1]))
            ).mappings()
        }
        sponsors = _sponsor_map(conn, feed_ids)
    out: dict[int, dict[str, Any]] = {}
    for oid, box in boxes.items():
        sub = subs.get(box["subscription_id"])
        if sub is None:
            continue
        out[oid] = {
            "outbox": box,
            "subscription": sub,
            "feed": feed_rows[sub["feed_id"]],
            "entry": entry_rows.get(box["entry_id"]) if box["entry_id"] else None,
            "sponsors": {k: v for k, v in sponsors.items() if k == sub["feed_id"]},
        }
    return out


def publisher_balances(store: SqlStore, publisher_ids: Iterable[int]) -> dict[int, int]:
    ids = list(publisher_ids)
    if not ids:
        return {}
    with store.engine.connect() as conn:
        return _balances(conn, ids)


def digest_context(store: SqlStore, outbox_id: int) -> dict[str, Any] | None:
    """The issue's items (of subscriptions still active), grouped by feed, plus billing inputs."""
    with store.engine.connect() as conn:
        box = (
            conn.execute(sa.select(notify_outbox).where(notify_outbox.c.id == outbox_id))
            .mappings()
            .first()
        )
        if box is None:
            return None
        reader = (
            conn.execute(sa.select(notify_readers).where(notify_readers.c.id == box["reader_id"]))
            .mappings()
            .one()
        )
        rows = [
            dict(r)
            for r in conn.execute(
                sa.select(
                    notify_digest_items.c.id.label("item_id"),
                    notify_subscriptions.c.id.label("subscription_id"),
                    notify_subscriptions.c.manage_token,
                    notify_subscriptions.c.status.label("subscription_status"),
                    feeds.c.id.label("feed_id"),
                    feeds.c.url.label("feed_url"),
                    feeds.c.title.label("feed_title"),
                    feeds.c.link.label("feed_link"),
                    entries.c.id.label("entry_row"),
                    entries.c.title,
                    entries.c.link,
                    entries.c.summary,
                    entries.c.content,
                    entries.c.published,
                    entries.c.categories,
                )
                .join(
                    notify_subscriptions,
                    notify_subscriptions.c.id == notify_digest_items.c.subscription_id,
                )
                .join(feeds, feeds.c.id == notify_subscriptions.c.feed_id)
                .join(entries, entries.c.id == notify_digest_items.c.entry_id)
                .where(notify_digest_items.c.outbox_id == outbox_id)
                .order_by(feeds.c.id, entries.c.published, entries.c.id)
            ).mappings()
        ]
        sponsors = _sponsor_map(conn, [r["feed_id"] for r in rows])
        bal = _balances(conn, sponsors.values())
    return {
        "outbox": dict(box),
        "reader": dict(reader),
        "items": rows,
        "sponsors": sponsors,
        "balances": bal,
    }


def mark_sent(
    store: SqlStore,
    outbox_id: int,
    now: datetime,
    *,
    subject: str,
    charges: Sequence[Charge] = (),
    included_items: Sequence[int] | None = None,
    reset_failures: bool = True,
) -> None:
    """The server accepted the message: mark it sent and book its charges, in one transaction.

    For a digest, items added to the issue after it was rendered (a crawl that committed while it
    was in flight) move to the next issue instead of being marked sent unseen.
    """
    with store.engine.begin() as conn:
        updated = conn.execute(
            notify_outbox.update()
            .where(notify_outbox.c.id == outbox_id, notify_outbox.c.status == "pending")
            .values(status="sent", sent_at=now, subject=subject, last_error=None)
        ).rowcount
        if not updated:
            return
        if reset_failures:
            reader_id = sa.select(notify_outbox.c.reader_id).where(
                notify_outbox.c.id == outbox_id
            )
            conn.execute(
                notify_readers.update()
                .where(notify_readers.c.id == reader_id.scalar_subquery())
                .values(hard_failures=0)
            )
        for c in charges:
            kind, party = c.party
            conn.execute(
                notify_ledger.insert().values(
                    at=now,
                    kind="charge",
                    publisher_id=party if kind == "publisher" else None,
                    reader_id=party if kind == "reader" else None,
                    amount=-abs(c.amount),
                    outbox_id=outbox_id,
                    charge_key=f"{outbox_id}:{kind}:{party}",
                    note=c.note,
                )
            )
        if included_items is not None:
            late = [
                dict(r)
                for r in conn.execute(
                    sa.select(
                        notify_digest_items.c.id.label("item_id"),
                        notify_subscriptions.c.id,
                        notify_subscriptions.c.reader_id,
                        notify_subscriptions.c.mode,
                        notify_subscriptions.c.hour,
                        notify_subscriptions.c.weekday,
                        notify_subscriptions.c.status,
                        notify_readers.c.tz,
                    )
                    .join(
                        notify_subscriptions,
                        notify_subscriptions.c.id == notify_digest_items.c.subscription_id,
                    )
                    .join(notify_readers, notify_readers.c.id == notify_subscriptions.c.reader_id)
                    .where(
                        notify_digest_items.c.outbox_id == outbox_id,
                        notify_digest_items.c.id.not_in(list(included_items) or [-1]),
                    )
                ).mappings()
            ]
            for item in late:
                if item["status"] != "active" or item["mode"] == "realtime":
                    continue
                target = _open_issue(conn, item, now)
                conn.execute(
                    notify_digest_items.update()
                    .where(notify_digest_items.c.id == item["item_id"])
                    .values(outbox_id=target)
                )


def mark_temporary(
    store: SqlStore, outbox_id: int, now: datetime, error: str, retry_at: datetime
) -> None:
    """A 4xx or a connection failure: stays pending, retried at ``retry_at``."""
    with store.engine.begin() as conn:
        conn.execute(
            notify_outbox.update()
            .where(notify_outbox.c.id == outbox_id, notify_outbox.c.status == "pending")
            .values(
                attempts=notify_outbox.c.attempts + 1,
                last_error=error[:500],
                due_at=retry_at,
            )
        )


def mark_failed(
    store: SqlStore, outbox_id: int, now: datetime, error: str, *, flag_after: int
) -> bool:
    """A 5xx reply: this message failed; the address is flagged after ``flag_after`` in a row.

    Returns True when the address got flagged by this failure.
    """
    with store.engine.begin() as conn:
        conn.execute(
            notify_outbox.update()
            .where(notify_outbox.c.id == outbox_id)
            .values(status="failed", attempts=notify_outbox.c.attempts + 1, last_error=error[:500])
        )
        rid = conn.execute(
            sa.select(notify_outbox.c.reader_id).where(notify_outbox.c.id == outbox_id)
        ).scalar_one()
        conn.execute(
            notify_readers.update()
            .where(notify_readers.c.id == rid)
            .values(hard_failures=notify_readers.c.hard_failures + 1)
        )
        n, flagged = conn.execute(
            sa.select(notify_readers.c.hard_failures, notify_readers.c.flagged_at).where(
                notify_readers.c.id == rid
            )
        ).one()
        if n >= flag_after and flagged is None:
            conn.execute(
                notify_readers.update().where(notify_readers.c.id == rid).values(flagged_at=now)
            )
            return True
    return False


def cancel(store: SqlStore, outbox_id: int, reason: str, *, status: str = "cancelled") -> None:
    """Not sent, on purpose, with the reason recorded (unsubscribed, address flagged, …)."""
    with store.engine.begin() as conn:
        conn.execute(
            notify_outbox.update()
            .where(notify_outbox.c.id == outbox_id, notify_outbox.c.status == "pending")
            .values(status=status, last_error=reason[:500])
        )


def list_outbox(store: SqlStore, *, limit: int = 200) -> list[dict[str, Any]]:
    q = (
        sa.select(
            notify_outbox.c.id,
            notify_outbox.c.kind,
            notify_outbox.c.status,
            notify_outbox.c.dedupe_key,
            notify_outbox.c.created_at,
            notify_outbox.c.due_at,
            notify_outbox.c.sent_at,
            notify_outbox.c.attempts,
            notify_outbox.c.last_error,
            notify_outbox.c.subject,
            notify_outbox.c.schedule,
            notify_readers.c.email,
        )
        .join(notify_readers, notify_readers.c.id == notify_outbox.c.reader_id)
        .order_by(notify_outbox.c.id.desc())
        .limit(limit)
    )
    with store.engine.connect() as conn:
        return [dict(r) for r in conn.execute(q).mappings()]


# --- publishers and credits ---------------------------------------------------------------------


def grant(
    store: SqlStore,
    publisher: str,
    amount: int,
    now: datetime,
    *,
    feed_ids: Sequence[int] = (),
    note: str = "",
) -> dict[str, Any]:
    """Add credits to a publisher (created on first grant) and make it pay for these feeds."""
    with store.engine.begin() as conn:
        pid = conn.execute(
            sa.select(notify_publishers.c.id).where(notify_publishers.c.name == publisher)
        ).scalar()
        if pid is None:
            pid = conn.execute(
                notify_publishers.insert()
                .values(name=publisher, created_at=now)
                .returning(notify_publishers.c.id)
            ).scalar_one()
        if amount:
            conn.execute(
                notify_ledger.insert().values(
                    at=now, kind="grant", publisher_id=pid, amount=int(amount), note=note
                )
            )
        for fid in feed_ids:
            conn.execute(notify_sponsorships.delete().where(notify_sponsorships.c.feed_id == fid))
            conn.execute(
                notify_sponsorships.insert().values(feed_id=fid, publisher_id=pid, since=now)
            )
        bal = _balances(conn, [pid])[pid]
    return {"publisher": publisher, "id": int(pid), "balance": bal}


def ledger(store: SqlStore) -> list[dict[str, Any]]:
    q = sa.select(notify_ledger).order_by(notify_ledger.c.id)
    with store.engine.connect() as conn:
        return [dict(r) for r in conn.execute(q).mappings()]


# --- the development sink -----------------------------------------------------------------------


def record_sink(
    store: SqlStore,
    *,
    received_at: datetime,
    mail_from: str,
    rcpt_to: str,
    subject: str,
    message_id: str,
    raw: str,
) -> None:
    with store.engine.begin() as conn:
        conn.execute(
            notify_sink.insert().values(
                received_at=received_at,
                mail_from=mail_from,
                rcpt_to=rcpt_to,
                subject=subject,
                message_id=message_id,
                raw=raw,
            )
        )


def list_sink(store: SqlStore, *, limit: int = 100) -> list[dict[str, Any]]:
    q = sa.select(notify_sink).order_by(notify_sink.c.id.desc()).limit(limit)
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
                        "token": _token(),
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
                    "confirm_token": _token(),
                    "manage_token": _token(),
                    "created_at": now,
                    "confirmed_at": now,
                }
            )
        for i in range(0, len(subs), 1000):
            conn.execute(notify_subscriptions.insert(), subs[i : i + 1000])
        created = len(subs)
    return created
