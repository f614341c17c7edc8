"""The notification outbox, written inside the crawler's transaction.

New entries and the outbox rows they cause commit together, so a crash can never store an entry
and lose its notification. Real-time subscriptions get a row per entry; digest subscriptions add
the entry to their next open issue. Importing this module registers the hook (see
:mod:`fairfetch.store.hooks`); ``fairfetch.store`` imports it, so every store writes the outbox."""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from fairfetch.config import Settings
from fairfetch.notify.filters import CategoryFilter
from fairfetch.notify.newness import identity_variants, is_news
from fairfetch.notify.options import NotifyOptions
from fairfetch.notify.schedule import next_issue, schedule_label
from fairfetch.store.hooks import register_new_entries_hook
from fairfetch.store.tables import crawls, entries, feeds
from fairfetch.store.tables_notify import (
    notify_digest_items,
    notify_outbox,
    notify_readers,
    notify_subscriptions,
)
from fairfetch.store.types import key_text, shortened_head
from fairfetch.store.upserts import CONFLICT_DIALECTS, conflict_insert

_CHUNK = 400


def _message_local() -> str:
    """The left part of a Message-ID, fixed when the outbox row is written (stable on resend)."""
    return secrets.token_hex(12)


def insert_outbox(
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
    """Insert one outbox row unless its dedupe key exists; returns the row id either way.

    Another writer may be inserting the same key (a crawl opening the next digest issue while
    a sender's mark moves a late item there): the insert then waits for it and does nothing,
    and its row is the one; a unique violation here failed the mark after the server had
    taken the mail, and the mail went out again.
    """
    select = sa.select(notify_outbox.c.id).where(notify_outbox.c.dedupe_key == dedupe_key)
    found = conn.execute(select).scalar()
    if found is not None:
        return int(found)
    inserted = conn.execute(
        _insert_unless_keyed(conn).values(
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
        ).returning(notify_outbox.c.id)
    ).scalar()
    if inserted is not None:
        return int(inserted)
    return int(conn.execute(select).scalar_one())


def _insert_unless_keyed(conn: sa.Connection) -> Any:
    """INSERT into the outbox that skips a row whose dedupe key another writer stored first
    (waiting for it to commit or roll back, on PostgreSQL)."""
    dialect = conn.dialect.name
    if dialect not in CONFLICT_DIALECTS:
        return notify_outbox.insert()
    return conflict_insert(notify_outbox, dialect).on_conflict_do_nothing(
        index_elements=["dedupe_key"]
    )


#: Characters left off a respelt head before it is compared (a scheme and "www." change the
#: head's length by a few; a cut falls on a character boundary).
_HEAD_MARGIN = 32


def _news_entries(
    conn: sa.Connection,
    feed_id: int,
    entry_ids: Sequence[int],
    now: datetime,
    options: NotifyOptions,
) -> list[dict[str, Any]]:
    """The new rows that are news: not republished old items, not an old item under a new id.

    The republish guard measures from the feed as it was before this read: its newest entry
    stored before now, and its previous successful read. After an outage of ours (weeks without
    a read) this read brings weeks of items, and this read's own newest, or now, would make all
    but the last week of them look republished."""
    newest = conn.execute(
        sa.select(sa.func.max(sa.func.coalesce(entries.c.published, entries.c.updated))).where(
            entries.c.feed_id == feed_id, entries.c.first_seen_at < now
        )
    ).scalar()
    if newest is None:  # a first read: the feed's newest, this read's entries included
        newest = conn.execute(
            sa.select(feeds.c.newest_entry_at).where(feeds.c.id == feed_id)
        ).scalar()
    last_read = conn.execute(
        sa.select(sa.func.max(crawls.c.at)).where(
            crawls.c.feed_id == feed_id,
            crawls.c.at < now,
            crawls.c.outcome.in_(("ok", "not_modified")),
        )
    ).scalar()
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
            last_read=last_read,
            limits=options.newness,
        )
    ]
    if not fresh:
        return []
    new_set = set(entry_ids)
    variants: dict[str, int] = {}
    heads: list[tuple[str, int]] = []
    for r in fresh:
        head = shortened_head(r["entry_id"])
        if head is None:
            for v in identity_variants(r["entry_id"])[1:]:
                variants[key_text(v)] = r["id"]  # as the column stores (and returns) it
        else:
            # Stored shortened (head, mark, digest of the whole): another spelling's digest is
            # of another whole, so only heads compare. A respelt head is cut a few characters
            # off where the other spelling's was: the shared part, less a margin, is compared.
            heads.extend((v[: len(v) - _HEAD_MARGIN], r["id"]) for v in identity_variants(head)[1:])
    dupes: set[int] = set()
    for prefix, entry in heads:
        # substr, not LIKE: SQLite's LIKE ignores case, and two ids differing in case are two.
        for other in conn.execute(
            sa.select(entries.c.id).where(
                entries.c.feed_id == feed_id,
                sa.func.substr(entries.c.entry_id, 1, len(prefix)) == prefix,
            )
        ):
            if other.id not in new_set:
                dupes.add(entry)
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
    return _oldest_first([r for r in fresh if r["id"] not in dupes])


def _oldest_first(news: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The order the reader is told in: oldest first, so their inbox (newest on top) reads as
    the feed does. Notifications go out in the order they are queued, and a feed lists its
    newest item first: three new items of one read landed with the oldest on top. The dates
    decide where every item has one; otherwise the feed's own order, reversed (entries are
    stored in document order, so a higher id is further down the feed)."""
    if all((r["published"] or r["updated"]) is not None for r in news):
        return sorted(news, key=lambda r: (r["published"] or r["updated"], -r["id"]))
    return sorted(news, key=lambda r: -r["id"])


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


def issue_is_open(status: str, closed_at: datetime | None) -> bool:
    """A digest issue takes items until it first goes on the wire.

    The sender closes it (``closed_at``) before it renders it: a copy sent again after a crash
    between the server's acceptance and our mark carries the same Message-ID, so it must be
    the same message; an item added in between would be in the copy a reader's client drops
    as a duplicate, and lost.
    """
    return status == "pending" and closed_at is None


def _existing_keys(
    conn: sa.Connection, keys: Sequence[str]
) -> dict[str, tuple[int, str, datetime | None]]:
    found: dict[str, tuple[int, str, datetime | None]] = {}
    for i in range(0, len(keys), _CHUNK):
        for r in conn.execute(
            sa.select(
                notify_outbox.c.dedupe_key,
                notify_outbox.c.id,
                notify_outbox.c.status,
                notify_outbox.c.closed_at,
            ).where(notify_outbox.c.dedupe_key.in_(keys[i : i + _CHUNK]))
        ):
            found[r.dedupe_key] = (int(r.id), str(r.status), r.closed_at)
    return found


def _outbox_row(
    key: str, kind: str, reader_id: int, now: datetime, due_at: datetime, **extra: Any
) -> dict[str, Any]:
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
        _outbox_row(
            key, "item", sub["reader_id"], now, now, subscription_id=sub["id"], entry_id=e["id"]
        )
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
    conn: sa.Connection,
    subs: Sequence[tuple[dict[str, Any], list[dict[str, Any]]]],
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
        _outbox_row(
            key,
            "digest",
            sub["reader_id"],
            now,
            issue,
            schedule=schedule_label(sub["mode"], sub["hour"], sub["weekday"]),
        )
        for key, (sub, issue) in first.items()
        if key not in have
    ]
    # Another writer (a second crawl pass, the web process's re-fetch on a ping) may be opening
    # the same issue for another feed of this reader: its row is the one, and ours is skipped,
    # where a plain insert broke the unique key and failed this writer's whole batch.
    insert = _insert_unless_keyed(conn)
    for i in range(0, len(new_rows), 1000):
        conn.execute(insert, new_rows[i : i + 1000])
    if new_rows:
        have.update(_existing_keys(conn, [r["dedupe_key"] for r in new_rows]))
    issue_of: dict[int, int] = {}
    still_open: dict[int, bool] = {}
    for sub, _wanted in subs:
        oid, status, closed_at = have[sub_key[sub["id"]]]
        if oid not in still_open:
            still_open[oid] = issue_is_open(status, closed_at) and _hold_open(conn, oid)
        # an issue already sent (or on the wire) is never added to: the next open one is
        issue_of[sub["id"]] = oid if still_open[oid] else open_issue(conn, sub, now)
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


def _hold_open(conn: sa.Connection, outbox_id: int) -> bool:
    """Whether the issue is still open, read under a share lock held to the end of this
    transaction (PostgreSQL; SQLite has one writer): a sender closing it waits until the items
    added here are committed, and so renders them, or closed it first and they go to the next
    issue. Read without the lock, an issue closed and rendered meanwhile took items it never
    showed, and a copy sent again after a crash would differ under the same Message-ID."""
    row = conn.execute(
        sa.select(notify_outbox.c.status, notify_outbox.c.closed_at)
        .where(notify_outbox.c.id == outbox_id)
        .with_for_update(read=True)
    ).first()
    return row is not None and issue_is_open(row.status, row.closed_at)


def open_issue(conn: sa.Connection, sub: dict[str, Any], now: datetime) -> int:
    """The outbox row of the next issue of this subscription's digest still open.

    An issue already sent (or on the wire, see :func:`issue_is_open`) is never added to: the
    entry goes to the next one.
    """
    label = schedule_label(sub["mode"], sub["hour"], sub["weekday"])
    after = now
    for _ in range(1000):
        issue = next_issue(after, sub["mode"], sub["hour"], sub["weekday"], sub["tz"])
        key = f"digest:{sub['reader_id']}:{label}:{issue.strftime('%Y-%m-%dT%H:%MZ')}"
        row = conn.execute(
            sa.select(notify_outbox.c.id, notify_outbox.c.status, notify_outbox.c.closed_at).where(
                notify_outbox.c.dedupe_key == key
            )
        ).first()
        if row is None:
            return insert_outbox(
                conn,
                dedupe_key=key,
                kind="digest",
                reader_id=sub["reader_id"],
                now=now,
                due_at=issue,
                schedule=label,
            )
        if issue_is_open(row.status, row.closed_at) and _hold_open(conn, int(row.id)):
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
