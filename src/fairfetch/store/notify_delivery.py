"""SQL of notify's sending side: what is due, the context a message is rendered from, and the
row's fate (sent and charged, failed for now, failed for good, cancelled)."""

from __future__ import annotations

import contextlib
import fcntl
import threading
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from fairfetch.errors import StoreError
from fairfetch.notify.billing import Charge
from fairfetch.store.lock_files import sqlite_lock_fd
from fairfetch.store.notify_outbox import open_issue
from fairfetch.store.notify_subscriptions import listing_query
from fairfetch.store.refusals import refused
from fairfetch.store.sql import SqlStore
from fairfetch.store.tables import entries, feeds
from fairfetch.store.tables_notify import (
    notify_digest_items,
    notify_ledger,
    notify_outbox,
    notify_publishers,
    notify_readers,
    notify_sponsorships,
    notify_subscriptions,
)


def _reading_notifications(call: Mapping[str, Any]) -> str:
    n = len(call["outbox_ids"])
    return f"reading {n} notification{'' if n == 1 else 's'}"


@refused("reading the notifications due")
def due_outbox(
    store: SqlStore,
    now: datetime,
    limit: int,
    *,
    ids: Sequence[int] | None = None,
    after_id: int | None = None,
) -> list[dict[str, Any]]:
    """Pending rows due now, oldest first (by insertion), so a backlog drains in order.

    ``after_id``: only rows past it (a pass moves forward, past rows another sender holds).
    """
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
    if after_id is not None:
        q = q.where(notify_outbox.c.id > after_id)
    with store.engine.connect() as conn:
        return [dict(r) for r in conn.execute(q).mappings()]


#: First key of the PostgreSQL advisory locks that claim outbox rows (the second is the row id).
_ADVISORY_NS = 0x6E6F7466  # "notf"

#: SQLite: rows being sent by a sender in this process, per database (threads of one process:
#: the web app's confirmation mail beside ``run``). POSIX record locks belong to the process,
#: so two threads would both get one; this set tells them apart.
_LOCAL_CLAIMS: set[tuple[str, int]] = set()
_LOCAL_LOCK = threading.Lock()


class OutboxClaims:
    """One sender pass's claims on outbox rows, so two senders never both send a row.

    A row is sent only by the sender that claimed it, and only if it is still pending and due
    once claimed (another sender may have sent it since it was read). On PostgreSQL a claim is a
    session advisory lock on a connection of this pass: it is released when the row is settled,
    and by the server if the process dies, so a crash delays nothing. On SQLite it is a mark in
    this process and a record lock on a file beside the database (see store/lock_files.py). The
    claim is held from before the SMTP dialogue until after the row is marked.
    """

    @refused("opening a sender's claims on notifications")
    def __init__(self, store: SqlStore) -> None:
        self.store = store
        self._key = store.engine.url.render_as_string(hide_password=True)
        self._conn: sa.Connection | None = None
        self._held: set[int] = set()
        self._lock_fd: int | None = None
        if store.engine.dialect.name == "postgresql":
            self._conn = store.engine.connect().execution_options(isolation_level="AUTOCOMMIT")
        elif store.engine.dialect.name == "sqlite":
            self._lock_fd = sqlite_lock_fd(store, "notify")

    @refused("claiming notification {outbox_id}")
    def claim(self, outbox_id: int, now: datetime) -> bool:
        """True when this pass now owns the row and it still is pending and due at ``now``."""
        if self._conn is not None:
            got = self._conn.execute(
                sa.text("SELECT pg_try_advisory_lock(:ns, :id)"),
                {"ns": _ADVISORY_NS, "id": outbox_id},
            ).scalar()
            if not got:
                return False
        else:
            with _LOCAL_LOCK:
                if (self._key, outbox_id) in _LOCAL_CLAIMS:
                    return False
                if self._lock_fd is not None:
                    try:
                        fcntl.lockf(self._lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, outbox_id)
                    except OSError:  # EAGAIN/EACCES: another process is sending it
                        return False
                _LOCAL_CLAIMS.add((self._key, outbox_id))
        self._held.add(outbox_id)
        try:
            # Read by writing: a store that would not take the mark after the send (SQLite
            # locked past its busy timeout by another process) fails the claim, before the
            # mail goes on the wire. Checked by a read, the mail went out, its mark failed,
            # and every later pass mailed it again for as long as the lock was held.
            with self.store.engine.begin() as conn:
                still = conn.execute(
                    notify_outbox.update()
                    .where(
                        notify_outbox.c.id == outbox_id,
                        notify_outbox.c.status == "pending",
                        notify_outbox.c.due_at <= now,
                    )
                    .values(status=notify_outbox.c.status)
                ).rowcount
        except BaseException:
            with contextlib.suppress(sa.exc.SQLAlchemyError, StoreError):
                self.release(outbox_id)  # (the claim's refusal is the one to report)
            raise
        if not still:
            self.release(outbox_id)
            return False
        return True

    @refused("releasing the claim on notification {outbox_id}")
    def release(self, outbox_id: int) -> None:
        if outbox_id not in self._held:
            return
        self._held.discard(outbox_id)
        if self._conn is not None:
            self._conn.execute(
                sa.text("SELECT pg_advisory_unlock(:ns, :id)"),
                {"ns": _ADVISORY_NS, "id": outbox_id},
            )
        else:
            with _LOCAL_LOCK:
                _LOCAL_CLAIMS.discard((self._key, outbox_id))
                if self._lock_fd is not None:
                    fcntl.lockf(self._lock_fd, fcntl.LOCK_UN, 1, outbox_id)

    def close(self) -> None:
        for outbox_id in list(self._held):
            try:
                self.release(outbox_id)
            except (sa.exc.SQLAlchemyError, StoreError):  # (release says it as StoreError)
                break  # the connection is gone, and its locks with it
        if self._conn is not None:
            self._conn.close()
            self._conn = None


@refused("counting notifications")
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


def balances_in(conn: sa.Connection, publisher_ids: Iterable[int]) -> dict[int, int]:
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


@refused("reading the publishers' balances")
def balances(store: SqlStore) -> list[dict[str, Any]]:
    """Every publisher with its balance and sponsored feeds."""
    with store.engine.connect() as conn:
        pubs = [dict(r) for r in conn.execute(sa.select(notify_publishers)).mappings()]
        bal = balances_in(conn, [p["id"] for p in pubs])
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


@refused("reading notification {outbox_id}")
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
            conn.execute(listing_query().where(notify_subscriptions.c.id == box["subscription_id"]))
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
        bal = balances_in(conn, sponsors.values())
    return {
        "outbox": dict(box),
        "subscription": dict(sub),
        "feed": dict(feed),
        "entry": dict(entry) if entry is not None else None,
        "sponsors": sponsors,
        "balances": bal,
    }


@refused(_reading_notifications)
def item_contexts(store: SqlStore, outbox_ids: Sequence[int]) -> dict[int, dict[str, Any]]:
    """:func:`item_context` for a batch of rows in a handful of queries (the sender's hot path).

    Balances are not included: who pays is decided per message by :func:`hold_credits`, never
    from a balance read earlier (another sender may be spending it). The ``balances`` of
    :func:`item_context` and :func:`digest_context` are for display only.
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
                listing_query().where(notify_subscriptions.c.id.in_(sorted(sub_ids) or [-1]))
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


@refused("reading the publishers' balances")
def publisher_balances(store: SqlStore, publisher_ids: Iterable[int]) -> dict[int, int]:
    ids = list(publisher_ids)
    if not ids:
        return {}
    with store.engine.connect() as conn:
        return balances_in(conn, ids)


#: Ledger kinds of a publisher's credit set aside for one outbox row before its mail goes on the
#: wire (``hold``), given back when the row is not delivered after all (``released``, amount 0).
#: A hold becomes the ``charge`` when the server accepts the mail.
HOLD, RELEASED = "hold", "released"


def _charge_key(outbox_id: int, kind: str, party: int) -> str:
    return f"{outbox_id}:{kind}:{party}"


@refused("holding publisher credits for notification {outbox_id}")
def hold_credits(
    store: SqlStore, outbox_id: int, publisher_ids: Iterable[int], now: datetime, *,
    note: str = "",
) -> set[int]:
    """Set one credit of each publisher aside for this outbox row, before its mail is sent.

    Returns the publishers that pay for the row: those whose credit is held for it now or was
    held by an earlier attempt (a retry or a resend after a crash costs nothing more). A
    publisher without a credit left is not in it: the reader pays and is told, as when the
    balance ran out.

    Two senders may decide at once who pays for two mails of one publisher: the balance is
    checked and debited in one statement, under a lock on the publisher's row on PostgreSQL
    (the write lock on SQLite), so its last credit pays for one mail only. Reading the balance
    and booking the charge after the send let both senders spend it.
    """
    ids = sorted(set(publisher_ids))
    if not ids:
        return set()
    held: set[int] = set()
    with store.engine.begin() as conn:
        # FOR NO KEY UPDATE: holds of one publisher queue up; ledger inserts that only reference
        # the publisher (a grant, another feed's charge) are not blocked by it
        conn.execute(
            sa.select(notify_publishers.c.id)
            .where(notify_publishers.c.id.in_(ids))
            .order_by(notify_publishers.c.id)
            .with_for_update(key_share=True)
        ).all()
        for pid in ids:
            key = _charge_key(outbox_id, "publisher", pid)
            before = conn.execute(
                sa.select(notify_ledger.c.kind).where(notify_ledger.c.charge_key == key)
            ).scalar()
            if before is not None:
                if before in (HOLD, "charge"):
                    held.add(pid)
                continue
            balance = (
                sa.select(sa.func.coalesce(sa.func.sum(notify_ledger.c.amount), 0))
                .where(notify_ledger.c.publisher_id == pid)
                .scalar_subquery()
            )
            src = sa.select(
                sa.literal(now, notify_ledger.c.at.type),
                sa.literal(HOLD),
                sa.literal(pid),
                sa.literal(-1),
                sa.literal(outbox_id),
                sa.literal(key),
                sa.literal(note),
            ).where(balance >= 1)
            got = conn.execute(
                notify_ledger.insert()
                .from_select(
                    ["at", "kind", "publisher_id", "amount", "outbox_id", "charge_key", "note"],
                    src,
                )
                .returning(notify_ledger.c.id)
            ).first()
            if got is not None:  # (rowcount of INSERT … SELECT is -1 on psycopg)
                held.add(pid)
    return held


def _release_holds(
    conn: sa.Connection, outbox_id: int, reason: str, *, keep: Iterable[int] = ()
) -> None:
    """Give back the credits held for a row that was not delivered (or that a publisher no
    longer pays for): the hold stays in the ledger, at 0, saying why."""
    q = notify_ledger.update().where(
        notify_ledger.c.outbox_id == outbox_id, notify_ledger.c.kind == HOLD
    )
    kept = sorted(set(keep))
    if kept:
        q = q.where(notify_ledger.c.publisher_id.not_in(kept))
    conn.execute(
        q.values(kind=RELEASED, amount=0, note=sa.func.substr(
            notify_ledger.c.note + sa.literal(f" (released: {reason})"), 1, 500))
    )


@refused("reading digest notification {outbox_id}")
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
                # Undated entries first on both backends (NULL sorts first on SQLite, last
                # on PostgreSQL): the first items of an issue are those that keep their body.
                .order_by(
                    feeds.c.id, entries.c.published.is_not(None), entries.c.published,
                    entries.c.id,
                )
            ).mappings()
        ]
        sponsors = _sponsor_map(conn, [r["feed_id"] for r in rows])
        bal = balances_in(conn, sponsors.values())
    return {
        "outbox": dict(box),
        "reader": dict(reader),
        "items": rows,
        "sponsors": sponsors,
        "balances": bal,
    }


@refused("marking notification {outbox_id} sent")
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

    ``reset_failures``: the address took mail, so its hard-failure count and flag are cleared.

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
            reader_id = sa.select(notify_outbox.c.reader_id).where(notify_outbox.c.id == outbox_id)
            conn.execute(
                notify_readers.update()
                .where(notify_readers.c.id == reader_id.scalar_subquery())
                .values(hard_failures=0, flagged_at=None)
            )
        paying = [c.party[1] for c in charges if c.party[0] == "publisher"]
        # a held credit becomes the charge, booked at the send; one no longer needed is given back
        conn.execute(
            notify_ledger.update()
            .where(
                notify_ledger.c.outbox_id == outbox_id,
                notify_ledger.c.kind == HOLD,
                notify_ledger.c.publisher_id.in_(paying or [-1]),
            )
            .values(kind="charge", at=now)
        )
        _release_holds(conn, outbox_id, "not charged", keep=paying)
        for c in charges:
            kind, party = c.party
            key = _charge_key(outbox_id, kind, party)
            if conn.execute(
                sa.select(notify_ledger.c.id).where(notify_ledger.c.charge_key == key)
            ).first() is not None:
                continue  # booked from its hold above
            conn.execute(
                notify_ledger.insert().values(
                    at=now,
                    kind="charge",
                    publisher_id=party if kind == "publisher" else None,
                    reader_id=party if kind == "reader" else None,
                    amount=-abs(c.amount),
                    outbox_id=outbox_id,
                    charge_key=key,
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
                target = open_issue(conn, item, now)
                conn.execute(
                    notify_digest_items.update()
                    .where(notify_digest_items.c.id == item["item_id"])
                    .values(outbox_id=target)
                )


@refused("closing digest notification {outbox_id}")
def close_issue(store: SqlStore, outbox_id: int, now: datetime) -> None:
    """A digest issue goes on the wire: from now on it takes no more items (they go to the next
    issue), so every copy of it, sent again after a crash, is the same message. Committed
    before the issue is rendered."""
    with store.engine.begin() as conn:
        conn.execute(
            notify_outbox.update()
            .where(
                notify_outbox.c.id == outbox_id,
                notify_outbox.c.status == "pending",
                notify_outbox.c.closed_at.is_(None),
            )
            .values(closed_at=now)
        )


@refused("recording a retry of notification {outbox_id}")
def mark_temporary(
    store: SqlStore, outbox_id: int, now: datetime, error: str, retry_at: datetime
) -> None:
    """A 4xx or a connection failure: stays pending, retried at ``retry_at``."""
    with store.engine.begin() as conn:
        _retry_later(conn, outbox_id, error, retry_at)


def _retry_later(conn: sa.Connection, outbox_id: int, error: str, at: datetime) -> None:
    """One more attempt counted on a still pending row, its error kept, due again at ``at``."""
    conn.execute(
        notify_outbox.update()
        .where(notify_outbox.c.id == outbox_id, notify_outbox.c.status == "pending")
        .values(attempts=notify_outbox.c.attempts + 1, last_error=error[:500], due_at=at)
    )


#: ``last_error`` of the row that holds the queue while the mail server is unavailable.
SERVER_HOLD = "waiting for the mail server: "


@refused("holding the queue at notification {outbox_id}")
def hold_queue(
    store: SqlStore, outbox_id: int, now: datetime, error: str, until: datetime
) -> None:
    """The server is unavailable (not this message): this row retries at ``until`` and holds
    the queue — rows after it are not sent before it (see :func:`queue_held_from`), so a backlog
    drains oldest first once the server is back, whatever happened while it was away."""
    with store.engine.begin() as conn:
        _retry_later(conn, outbox_id, SERVER_HOLD + error, until)
        conn.execute(
            notify_outbox.update()
            .where(
                notify_outbox.c.status == "pending",
                notify_outbox.c.id > outbox_id,
                notify_outbox.c.due_at < until,
            )
            .values(due_at=until)
        )


@refused("reading whether the queue is held")
def queue_held_from(store: SqlStore, now: datetime) -> int | None:
    """The oldest row holding the queue at ``now`` (a server outage's retry still ahead): rows
    after it wait for it. None when the queue is not held."""
    with store.engine.connect() as conn:
        found = conn.execute(
            sa.select(sa.func.min(notify_outbox.c.id)).where(
                notify_outbox.c.status == "pending",
                notify_outbox.c.due_at > now,
                notify_outbox.c.last_error.startswith(SERVER_HOLD, autoescape=True),
            )
        ).scalar()
    return int(found) if found is not None else None


@refused("marking notification {outbox_id} failed")
def mark_failed(
    store: SqlStore, outbox_id: int, now: datetime, error: str, *, flag_after: int,
    count: bool = True,
) -> bool:
    """A 5xx reply: this message failed; the address is flagged after ``flag_after`` in a row.

    ``count``: the failure is the address's (not our message's: too big, content refused), so
    it counts towards flagging it. Returns True when the address got flagged by this failure.
    """
    with store.engine.begin() as conn:
        conn.execute(
            notify_outbox.update()
            .where(notify_outbox.c.id == outbox_id)
            .values(status="failed", attempts=notify_outbox.c.attempts + 1, last_error=error[:500])
        )
        _release_holds(conn, outbox_id, "not delivered")
        if not count:
            return False
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


@refused("cancelling notification {outbox_id}")
def cancel(store: SqlStore, outbox_id: int, reason: str, *, status: str = "cancelled") -> None:
    """Not sent, on purpose, with the reason recorded (unsubscribed, address flagged, …)."""
    with store.engine.begin() as conn:
        done = conn.execute(
            notify_outbox.update()
            .where(notify_outbox.c.id == outbox_id, notify_outbox.c.status == "pending")
            .values(status=status, last_error=reason[:500])
        ).rowcount
        if done:
            _release_holds(conn, outbox_id, "not sent")


@refused("listing the outbox")
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
