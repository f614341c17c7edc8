"""SQL of notify's subscriptions: readers, sign-up and its confirmation, the management link,
unsubscribing, listings and bulk import.

Tokens are minted here and only here (:func:`new_token`), so every token a reader pastes obeys
the same rule."""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa

from fairfetch.config import Settings
from fairfetch.errors import InputError, NotFoundError
from fairfetch.notify.schedule import schedule_label
from fairfetch.store.hooks import run_new_entries_hooks
from fairfetch.store.notify_outbox import insert_outbox
from fairfetch.store.refusals import refused
from fairfetch.store.sql import SqlStore
from fairfetch.store.tables import entries, feeds
from fairfetch.store.tables_notify import (
    notify_digest_items,
    notify_outbox,
    notify_readers,
    notify_sponsorships,
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
    #: this address was sent CONFIRMS_PER_ADDRESS_PER_DAY confirmation mails (for any feeds)
    #: in the last day, so none was queued for this one: it stays pending, unmailed
    address_throttled: bool = False


#: What an old confirmation link of an ended subscription answers.
SPENT_CONFIRMATION = (
    "confirmation token (that subscription was ended since; subscribe again for a new link)"
)

#: A pending subscription gets at most one confirmation mail per this interval, however often
#: the public form is posted for that address.
CONFIRM_RESEND_AFTER = timedelta(hours=1)

#: Confirmation mails one address may be sent in a day, whatever the feeds. The hourly limit
#: above is per subscription: a stranger posting the public form once per feed of a large
#: directory had every feed's confirmation mailed to a victim's address (our server sending
#: the spam, and our mail reputation paying for it).
CONFIRMS_PER_ADDRESS_PER_DAY = 10


def _unsubscribing(call: Mapping[str, Any]) -> str:
    """What an unsubscribe was ending: the address when the operator named it, never a token
    (it acts for the reader, and the message reaches terminals, pages and logs)."""
    if call["manage_token"] is not None:
        return "unsubscribing a subscription by its link"
    if call["reader_token"] is not None:
        return "unsubscribing a reader's digest by its link"
    return f"unsubscribing {call['email']!r} from feed {call['feed_id']}"


def _importing(call: Mapping[str, Any]) -> str:
    n = len(call["rows"])
    return f"importing {n} subscription{'' if n == 1 else 's'}"


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


@refused("subscribing {email!r} to feed {feed_id}")
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
    confirms_per_day: int | None = None,
) -> Subscribed:
    """Create (or renew) a pending subscription and queue its confirmation mail.

    ``confirms_per_day``: queue none when the address was sent that many confirmation mails
    in the last day, for any feeds (the public form's cap, CONFIRMS_PER_ADDRESS_PER_DAY; the
    operator's CLI has none); the subscription is kept pending, unmailed.

    An active subscription keeps working and gets the new settings when ``update_active`` (the
    CLI; the public web form passes False: a stranger must not change someone's subscription);
    a pending or unsubscribed one goes (back) to pending with a fresh confirmation token and a
    new confirmation mail, at most one per CONFIRM_RESEND_AFTER.
    """
    throttled = False
    with store.engine.begin() as conn:
        # A duplicate feed (found by its old URL) is no longer crawled: its readers belong on
        # the feed it duplicates, where nothing would reach them otherwise.
        feed_id = duplicate_target(conn, feed_id) or feed_id
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
        address_throttled = False
        if sub["status"] == "pending" and not throttled and confirms_per_day is not None:
            sent_today = conn.execute(
                sa.select(sa.func.count()).select_from(notify_outbox).where(
                    notify_outbox.c.kind == "confirm",
                    notify_outbox.c.reader_id == reader["id"],
                    notify_outbox.c.created_at > now - timedelta(days=1),
                )
            ).scalar_one()
            address_throttled = sent_today >= confirms_per_day
        if sub["status"] == "pending" and not throttled and not address_throttled:
            outbox_id = insert_outbox(
                conn,
                dedupe_key=f"confirm:{sub['id']}:{sub['confirm_token']}",
                kind="confirm",
                reader_id=reader["id"],
                subscription_id=sub["id"],
                now=now,
                due_at=now,
            )
    return Subscribed(sub, created, outbox_id, throttled, address_throttled)


@refused("confirming a subscription")
def confirm(store: SqlStore, token: str, now: datetime) -> dict[str, Any]:
    """Double opt-in: the link in the confirmation mail makes the subscription active.

    Confirming twice is harmless; entries first seen before this moment are never notified.
    A subscription that ended since spends its token: replaying an old confirmation link must
    not undo an unsubscribe (subscribing again mints a new token and mail).
    """
    with store.engine.begin() as conn:
        sub = _confirmable(conn, token)
        if sub["status"] != "active":
            conn.execute(
                notify_subscriptions.update()
                .where(notify_subscriptions.c.id == sub["id"])
                .values(status="active", confirmed_at=now, unsubscribed_at=None)
            )
            sub = {**sub, "status": "active", "confirmed_at": now}
    return sub


@refused("reading a confirmation link")
def confirmation_status(store: SqlStore, token: str) -> str:
    """The status of the subscription a confirmation link is for (the confirm page shows a
    button, or "already confirmed"), without confirming it: link scanners follow GETs.
    NotFoundError when no subscription has that link, or when it ended (a spent link)."""
    with store.engine.connect() as conn:
        return str(_confirmable(conn, token)["status"])


def _confirmable(conn: sa.Connection, token: str) -> dict[str, Any]:
    """The subscription a confirmation link is for; NotFoundError when there is none (a link
    replaced by a newer one) or when it ended since (a spent link)."""
    sub = _sub_by(conn, notify_subscriptions.c.confirm_token == token)
    if sub is None:
        raise NotFoundError("confirmation token (its link may have been replaced by a newer one)")
    if sub["status"] == "unsubscribed":
        raise NotFoundError(SPENT_CONFIRMATION)
    return sub


@refused("reading a subscription")
def subscription_by_token(store: SqlStore, manage_token: str) -> dict[str, Any]:
    with store.engine.connect() as conn:
        q = listing_query().where(notify_subscriptions.c.manage_token == manage_token)
        row = conn.execute(q).mappings().first()
    if row is None:
        raise NotFoundError("subscription")
    return dict(row)


@refused("updating a subscription")
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


@refused(_unsubscribing)
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


@refused("listing subscriptions")
def list_subscriptions(store: SqlStore) -> list[dict[str, Any]]:
    q = listing_query().order_by(notify_readers.c.email, notify_subscriptions.c.id)
    with store.engine.connect() as conn:
        return [dict(r) for r in conn.execute(q).mappings()]


@refused("looking up a reader")
def reader_exists(store: SqlStore, reader_token: str) -> bool:
    with store.engine.connect() as conn:
        return (
            conn.execute(
                sa.select(notify_readers.c.id).where(notify_readers.c.token == reader_token)
            ).first()
            is not None
        )


@refused(_importing)
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


#: How far a chain of duplicates is followed (A duplicates B, which duplicates C, …).
_MAX_DUPLICATE_HOPS = 10


def duplicate_target(conn: sa.Connection, feed_id: int) -> int | None:
    """The live feed a duplicate's readers belong on (the end of its ``duplicate_of`` chain),
    None when ``feed_id`` duplicates nothing (or the chain loops)."""
    seen = [feed_id]
    current = feed_id
    for _ in range(_MAX_DUPLICATE_HOPS):
        nxt = conn.execute(sa.select(feeds.c.duplicate_of).where(feeds.c.id == current)).scalar()
        if nxt is None:
            return None if current == feed_id else current
        if nxt in seen:
            return None
        seen.append(nxt)
        current = int(nxt)
    return None


@refused("reading what feed {feed_id} duplicates")
def feed_duplicate_of(store: SqlStore, feed_id: int) -> int | None:
    """``feeds.duplicate_of`` of one feed (``feeds show``)."""
    with store.engine.connect() as conn:
        found = conn.execute(
            sa.select(feeds.c.duplicate_of).where(feeds.c.id == feed_id)
        ).scalar()
    return None if found is None else int(found)


def follow_duplicates(
    conn: sa.Connection,
    now: datetime,
    feed_ids: Sequence[int] | None = None,
    settings: Settings | None = None,
) -> int:
    """Move the live (active and pending) subscriptions of duplicate feeds to the feed each
    duplicates; returns how many subscriptions were moved or ended.

    Why here, and run from the transaction that records the duplicate (the crawl's batch write,
    see ``batch_write``): a duplicate is no longer crawled, so from that commit on its readers
    get nothing more from it; an item the other feed gains between the mark and a later move
    (an operator's, or the notifier's next pass) would be enqueued for that feed's readers
    only, and lost for these. The notifier's pass runs it too (``feed_ids=None``: every
    duplicate), for duplicates recorded before the link existed (the migration links them) or
    written by a process that did not move them.

    A subscription keeps its id, tokens, mode, schedule, filters and confirmation, so the
    mails already queued for the old feed's entries still go (they name the subscription, not
    the feed), and the links in mails already sent keep working. A reader already subscribed to
    the other feed keeps that subscription; the duplicate one is ended (``unsubscribed``, at
    ``now``), and its queued mails move to the kept one, except those for an item the kept one
    has itself (the same entry id on the other feed), which are cancelled with that reason. The
    duplicate's sponsor carries over to a feed that has none (a publisher paid for its readers,
    and they are the same people). Items the duplicate's readers were told about and the other
    feed has not stored yet are carried over first (see :func:`_carry_entries`): else the other
    feed's next crawl would find them new and tell these readers again.
    """
    return _follow(conn, now, feed_ids, settings, skip_busy=False)[0]


def _follow(
    conn: sa.Connection,
    now: datetime,
    feed_ids: Sequence[int] | None,
    settings: Settings | None,
    *,
    skip_busy: bool,
) -> tuple[int, list[int]]:
    """:func:`follow_duplicates`; also returns the duplicates it moved readers of."""
    q = sa.select(feeds.c.id).where(feeds.c.duplicate_of.is_not(None))
    if feed_ids is not None:
        if not feed_ids:
            return 0, []
        q = q.where(feeds.c.id.in_(sorted(set(feed_ids))))
    done = 0
    moved: list[int] = []
    for src in conn.execute(q).scalars().all():
        target = duplicate_target(conn, int(src))
        if target is None or not _lock_pair(conn, int(src), target, skip_busy=skip_busy):
            continue
        n = _move_subscriptions(conn, int(src), target, now, settings)
        if n:
            done += n
            moved.append(int(src))
    return done, moved


def _lock_pair(conn: sa.Connection, src: int, target: int, *, skip_busy: bool) -> bool:
    """Lock the duplicate and the feed it duplicates before their readers are read and moved
    (PostgreSQL; SQLite has one writer at a time). False: another transaction holds one of
    them, and this one (``skip_busy``) leaves the pair to it.

    Two transactions moving one duplicate's readers at once (the notifier's pass, and a crawl
    recording the duplicate again) each read them before the other committed: both carried the
    same items to the other feed, and the second failed on the first's copy (a unique
    violation, after waiting for it), or, reading after the other's commit, found the reader
    "already" on the other feed and ended the subscription just moved there. The pass takes
    ``FOR UPDATE SKIP LOCKED``: a crawl writing either feed holds ``FOR NO KEY UPDATE`` on it
    from the start of its write (batch_write._lock_feeds), so the pass never waits for a crawl
    (the crawl moves its duplicate's readers itself; the next pass takes the rest), and a crawl
    that starts while the pass holds them waits at its start, before it has written anything,
    then reads the pass's result. The crawl takes ``FOR NO KEY UPDATE`` on both (waiting),
    before it carries any entry to the other feed."""
    if conn.dialect.name != "postgresql":
        return True
    q = sa.select(feeds.c.id).where(feeds.c.id.in_((src, target))).order_by(feeds.c.id)
    q = q.with_for_update(skip_locked=True) if skip_busy else q.with_for_update(key_share=True)
    return len(conn.execute(q).all()) == len({src, target})


def _live(feed_id: int) -> sa.Select[Any]:
    return sa.select(notify_subscriptions.c.id).where(
        notify_subscriptions.c.feed_id == feed_id,
        notify_subscriptions.c.status.in_(("active", "pending")),
    )


def _carry_entries(
    conn: sa.Connection, src: int, target: int, now: datetime, settings: Settings | None
) -> None:
    """Copy to ``target`` the duplicate's entries its readers were told about (or have queued)
    and ``target`` does not have, from the duplicate's last successful read (the document at
    the other feed's URL: the redirect was followed then). The duplicate read that URL first
    (its turn in the round came earlier): when ``target`` reads these entries they are not new
    any more, so the readers moved here are not told twice. Its own readers are told now, by
    the new-entries hooks (in this transaction), as they would have been then; the moved
    readers are not on ``target`` yet, and a reader of both is settled by the hand-over."""
    last_success = conn.execute(
        sa.select(feeds.c.last_success_at).where(feeds.c.id == src)
    ).scalar()
    if last_success is None:
        return
    told = sa.select(notify_outbox.c.entry_id).where(
        notify_outbox.c.subscription_id.in_(_live(src)),
        notify_outbox.c.kind == "item",
        notify_outbox.c.status.in_(("pending", "sent")),
    )
    digested = sa.select(notify_digest_items.c.entry_id).where(
        notify_digest_items.c.subscription_id.in_(_live(src))
    )
    there = sa.select(entries.c.entry_id).where(entries.c.feed_id == target)
    copied = (
        "entry_id", "title", "link", "published", "updated", "summary", "content", "authors",
        "categories", "enclosures", "image_url", "content_hash", "first_seen_at", "last_seen_at",
    )
    rows = conn.execute(
        sa.select(*(entries.c[c] for c in copied)).where(
            entries.c.feed_id == src,
            entries.c.last_seen_at >= last_success,
            sa.or_(entries.c.id.in_(told), entries.c.id.in_(digested)),
            entries.c.entry_id.not_in(there),
        ).order_by(entries.c.id)
    ).mappings().all()
    if not rows:
        return
    ids = [
        int(conn.execute(
            entries.insert().values(feed_id=target, **dict(r)).returning(entries.c.id)
        ).scalar_one())
        for r in rows
    ]
    dated = [d for r in rows if (d := r["published"] or r["updated"]) is not None]
    values: dict[str, Any] = {"entry_count": feeds.c.entry_count + len(ids)}
    if dated:
        newest = max(dated)
        values["newest_entry_at"] = sa.case(
            (feeds.c.newest_entry_at.is_(None), newest),
            (feeds.c.newest_entry_at < newest, newest),
            else_=feeds.c.newest_entry_at,
        )
    conn.execute(feeds.update().where(feeds.c.id == target).values(values))
    run_new_entries_hooks(conn, target, ids, now, False, settings)


def _move_subscriptions(
    conn: sa.Connection, src: int, target: int, now: datetime, settings: Settings | None
) -> int:
    live = conn.execute(
        sa.select(notify_subscriptions).where(
            notify_subscriptions.c.feed_id == src,
            notify_subscriptions.c.status.in_(("active", "pending")),
        ).order_by(notify_subscriptions.c.id)
    ).mappings().all()
    if not live:
        return 0
    _carry_entries(conn, src, target, now, settings)
    sponsor = conn.execute(
        sa.select(notify_sponsorships.c.publisher_id).where(notify_sponsorships.c.feed_id == src)
    ).scalar()
    if sponsor is not None and conn.execute(
        sa.select(notify_sponsorships.c.feed_id).where(notify_sponsorships.c.feed_id == target)
    ).first() is None:
        conn.execute(
            notify_sponsorships.insert().values(feed_id=target, publisher_id=sponsor, since=now)
        )
    for sub in live:
        kept = _sub_by(
            conn,
            sa.and_(
                notify_subscriptions.c.reader_id == sub["reader_id"],
                notify_subscriptions.c.feed_id == target,
            ),
        )
        if kept is None:
            conn.execute(
                notify_subscriptions.update()
                .where(notify_subscriptions.c.id == sub["id"])
                .values(feed_id=target)
            )
            continue
        if kept["status"] != "active" and sub["status"] == "active":
            # The reader's subscription there was pending or ended; the one that worked
            # carries on there, as it was.
            conn.execute(
                notify_subscriptions.update()
                .where(notify_subscriptions.c.id == kept["id"])
                .values(
                    mode=sub["mode"],
                    hour=sub["hour"],
                    weekday=sub["weekday"],
                    only_categories=sub["only_categories"],
                    except_categories=sub["except_categories"],
                    status="active",
                    confirmed_at=sub["confirmed_at"],
                    unsubscribed_at=None,
                )
            )
        _end(conn, notify_subscriptions.c.id == sub["id"], now)
        _hand_over_queued(conn, sub["id"], kept["id"], src, target)
    return len(live)


def _cancel_unsent(conn: sa.Connection, outbox_id: int, reason: str) -> None:
    """Only for a row never tried: no publisher credit is held for it yet."""
    conn.execute(
        notify_outbox.update()
        .where(
            notify_outbox.c.id == outbox_id,
            notify_outbox.c.status == "pending",
            notify_outbox.c.attempts == 0,
        )
        .values(status="cancelled", last_error=reason[:500])
    )


def _hand_over_queued(
    conn: sa.Connection, old_sub: int, kept_sub: int, src: int, target: int
) -> None:
    """Settle an ended duplicate subscription against the reader's kept one: one mail per item.

    An item the old one delivered is not sent again by the kept one (its queued copy is
    cancelled, its place in an open digest taken back); the old one's queued mails go through
    the kept one, but for items the kept one has itself."""
    old_rows = conn.execute(
        sa.select(notify_outbox.c.id, notify_outbox.c.status, entries.c.entry_id)
        .join(entries, entries.c.id == notify_outbox.c.entry_id)
        .where(
            notify_outbox.c.subscription_id == old_sub,
            notify_outbox.c.kind == "item",
            notify_outbox.c.status.in_(("pending", "sent")),
        )
    ).all()
    delivered = {r.entry_id for r in old_rows if r.status == "sent"}
    delivered.update(
        conn.execute(
            sa.select(entries.c.entry_id)
            .join(notify_digest_items, notify_digest_items.c.entry_id == entries.c.id)
            .join(notify_outbox, notify_outbox.c.id == notify_digest_items.c.outbox_id)
            .where(notify_digest_items.c.subscription_id == old_sub,
                   notify_outbox.c.status == "sent")
        ).scalars()
    )
    if delivered:
        for oid, eid in conn.execute(
            sa.select(notify_outbox.c.id, entries.c.entry_id)
            .join(entries, entries.c.id == notify_outbox.c.entry_id)
            .where(
                notify_outbox.c.subscription_id == kept_sub,
                notify_outbox.c.kind == "item",
                notify_outbox.c.status == "pending",
                entries.c.feed_id == target,
            )
        ).all():
            if eid in delivered:
                _cancel_unsent(
                    conn, oid, f"duplicate feed: already sent to the reader through feed #{src}"
                )
        open_issues = sa.select(notify_outbox.c.id).where(
            notify_outbox.c.status == "pending", notify_outbox.c.closed_at.is_(None)
        )
        for item_id, eid in _digest_items(
            conn, kept_sub, open_issues, entries.c.feed_id == target
        ):
            if eid in delivered:
                conn.execute(
                    notify_digest_items.delete().where(notify_digest_items.c.id == item_id)
                )
    had = _kept_entry_ids(conn, kept_sub, target)
    for oid, status, eid in old_rows:
        if status != "pending":
            continue
        if eid in had:
            # (a row being retried stays on the ended subscription: the sender cancels it,
            # giving back the credit it holds)
            _cancel_unsent(
                conn, oid, f"duplicate feed: feed #{target} already has this item for the reader"
            )
            continue
        conn.execute(
            notify_outbox.update()
            .where(notify_outbox.c.id == oid, notify_outbox.c.status == "pending")
            .values(subscription_id=kept_sub)
        )
    pending_issues = sa.select(notify_outbox.c.id).where(notify_outbox.c.status == "pending")
    keep = [i for i, eid in _digest_items(conn, old_sub, pending_issues) if eid not in had]
    if keep:
        conn.execute(
            notify_digest_items.update()
            .where(notify_digest_items.c.id.in_(keep))
            .values(subscription_id=kept_sub)
        )


def _digest_items(
    conn: sa.Connection, subscription_id: int, issues: Any, *where: sa.ColumnElement[bool]
) -> list[Any]:
    """(digest item id, entry id) of a subscription's items in ``issues`` (a select of outbox
    ids), further narrowed by ``where``."""
    return list(
        conn.execute(
            sa.select(notify_digest_items.c.id, entries.c.entry_id)
            .join(entries, entries.c.id == notify_digest_items.c.entry_id)
            .where(
                notify_digest_items.c.subscription_id == subscription_id,
                notify_digest_items.c.outbox_id.in_(issues),
                *where,
            )
        ).all()
    )


def _kept_entry_ids(conn: sa.Connection, kept_sub: int, target: int) -> set[str]:
    """Entry ids of the target feed the kept subscription has a mail (queued or sent) or a
    digest item for."""
    mailed = sa.select(notify_outbox.c.entry_id).where(
        notify_outbox.c.subscription_id == kept_sub,
        notify_outbox.c.kind == "item",
        notify_outbox.c.status.in_(("pending", "sent")),
    )
    digested = sa.select(notify_digest_items.c.entry_id).where(
        notify_digest_items.c.subscription_id == kept_sub
    )
    return set(
        conn.execute(
            sa.select(entries.c.entry_id).where(
                entries.c.feed_id == target,
                sa.or_(entries.c.id.in_(mailed), entries.c.id.in_(digested)),
            )
        ).scalars()
    )


@refused("moving the readers of duplicate feeds")
def move_duplicate_subscriptions(
    store: SqlStore, now: datetime, settings: Settings | None = None
) -> int:
    """:func:`follow_duplicates` for every duplicate, in a transaction of its own (the
    notifier's pass): a duplicate whose feeds another transaction is writing is left to it
    (see :func:`_lock_pair`), and only the duplicates moved here are settled."""
    with store.engine.begin() as conn:
        done, moved = _follow(conn, now, None, settings, skip_busy=True)
        if moved:
            settle_duplicates(conn, moved)
        return done


def settle_duplicates(conn: sa.Connection, feed_ids: Sequence[int]) -> None:
    """One mail per item for the readers who followed a duplicate, once the write that moved
    them has enqueued its new entries (the crawl's batch may hold the duplicate mark and the
    other feed's first read of an item the duplicate's readers were already told of).

    For every subscription on the other feed that holds mails or digest items of the
    duplicate's entries (moved there, or kept by a reader of both), a mail of the other feed's
    copy of such an entry (same entry id), not tried yet, is cancelled with the reason, and
    its place in an open digest issue is taken back: the duplicate's copy goes (or went)."""
    for src in feed_ids:
        target = duplicate_target(conn, int(src))
        if target is not None:
            _settle(conn, int(src), target)


def _settle(conn: sa.Connection, src: int, target: int) -> None:
    # subscription -> entry ids of src it was told of: sent, or queued and still going to be
    # (a queued mail of an ended subscription is cancelled by the sender: it tells nobody)
    told: dict[int, set[str]] = {}
    going = sa.or_(notify_outbox.c.status == "sent", sa.and_(
        notify_outbox.c.status == "pending", notify_subscriptions.c.status == "active"))
    for sub_id, eid in conn.execute(
        sa.select(notify_outbox.c.subscription_id, entries.c.entry_id)
        .join(entries, entries.c.id == notify_outbox.c.entry_id)
        .join(notify_subscriptions,
              notify_subscriptions.c.id == notify_outbox.c.subscription_id)
        .where(entries.c.feed_id == src, notify_outbox.c.kind == "item", going)
    ).all():
        told.setdefault(int(sub_id), set()).add(eid)
    for sub_id, eid in conn.execute(
        sa.select(notify_digest_items.c.subscription_id, entries.c.entry_id)
        .join(entries, entries.c.id == notify_digest_items.c.entry_id)
        .join(notify_outbox, notify_outbox.c.id == notify_digest_items.c.outbox_id)
        .join(notify_subscriptions,
              notify_subscriptions.c.id == notify_digest_items.c.subscription_id)
        .where(entries.c.feed_id == src, going)
    ).all():
        told.setdefault(int(sub_id), set()).add(eid)
    if not told:
        return
    subs = {
        int(r.id): int(r.reader_id)
        for r in conn.execute(
            sa.select(notify_subscriptions.c.id, notify_subscriptions.c.reader_id).where(
                notify_subscriptions.c.id.in_(sorted(told))
            )
        )
    }
    # a reader's ended subscription on src counts for the one kept on target
    kept = {
        int(r.reader_id): int(r.id)
        for r in conn.execute(
            sa.select(notify_subscriptions.c.id, notify_subscriptions.c.reader_id).where(
                notify_subscriptions.c.feed_id == target,
                notify_subscriptions.c.reader_id.in_(sorted(set(subs.values()))),
            )
        )
    }
    had: dict[int, set[str]] = {}
    for sub_id, eids in told.items():
        holder = kept.get(subs.get(sub_id, -1))
        if holder is not None:
            had.setdefault(holder, set()).update(eids)
    if not had:
        return
    reason = f"duplicate feed: already sent or queued to the reader through feed #{src}"
    for oid, sub_id, eid in conn.execute(
        sa.select(notify_outbox.c.id, notify_outbox.c.subscription_id, entries.c.entry_id)
        .join(entries, entries.c.id == notify_outbox.c.entry_id)
        .where(
            entries.c.feed_id == target,
            notify_outbox.c.kind == "item",
            notify_outbox.c.status == "pending",
            notify_outbox.c.subscription_id.in_(sorted(had)),
        )
    ).all():
        if eid in had[int(sub_id)]:
            _cancel_unsent(conn, int(oid), reason)
    open_issues = sa.select(notify_outbox.c.id).where(
        notify_outbox.c.status == "pending", notify_outbox.c.closed_at.is_(None)
    )
    for item_id, sub_id, eid in conn.execute(
        sa.select(
            notify_digest_items.c.id, notify_digest_items.c.subscription_id, entries.c.entry_id
        )
        .join(entries, entries.c.id == notify_digest_items.c.entry_id)
        .where(
            entries.c.feed_id == target,
            notify_digest_items.c.subscription_id.in_(sorted(had)),
            notify_digest_items.c.outbox_id.in_(open_issues),
        )
    ).all():
        if eid in had[int(sub_id)]:
            conn.execute(notify_digest_items.delete().where(notify_digest_items.c.id == item_id))
