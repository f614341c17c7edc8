"""The notifier: deliver what the outbox says is due, oldest first, within the rate limit.

Delivery order per message: claim -> hold the sponsors' credits -> render -> SMTP -> mark sent
(the held credits become its charges) in one transaction. A crash between the server's
acceptance and the mark resends that one message with the same Message-ID; nothing is marked
sent before the server accepted it, so nothing is lost. The credit is held before the send, not
read: two senders reading one balance both spent the publisher's last credit.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.message import Message
from typing import Any

from fairfetch.config import Settings
from fairfetch.errors import FairfetchError
from fairfetch.notify import render
from fairfetch.notify.backoff import (
    HARD_FAILURES_TO_FLAG,
    POLICY_GIVE_UP_AFTER,
    policy_gives_up,
    policy_since,
    retry_at,
)
from fairfetch.notify.billing import Decision, decide_digest, decide_realtime
from fairfetch.notify.options import NotifyOptions
from fairfetch.notify.smtp import POLICY_REFUSAL, SmtpConfig, SmtpSession
from fairfetch.store import notify_repo as repo
from fairfetch.store.notify_subscriptions import move_duplicate_subscriptions
from fairfetch.store.sql import SqlStore

__all__ = ["SendReport", "run_forever", "send_due", "send_one"]


def _utcnow() -> datetime:
    return datetime.now(UTC)


@dataclass
class SendReport:
    sent: int = 0
    retried: int = 0
    failed: int = 0
    cancelled: int = 0
    flagged: int = 0
    #: the pass stopped early because the server asked us to slow down (or was unreachable)
    deferred: bool = False
    errors: list[str] = field(default_factory=list)
    #: readers flagged during this pass (rows fetched earlier must not be attempted)
    flagged_readers: set[int] = field(default_factory=set)
    #: readers with a hard failure counted during this pass: their next accepted mail resets the
    #: count, whatever it was when the pass read their rows
    failed_readers: set[int] = field(default_factory=set)

    def as_dict(self) -> dict[str, Any]:
        return {
            "sent": self.sent,
            "retried": self.retried,
            "failed": self.failed,
            "cancelled": self.cancelled,
            "flagged": self.flagged,
            "deferred": self.deferred,
            "errors": list(self.errors),
        }


@dataclass(frozen=True)
class _Prepared:
    msg: Message | None
    subject: str = ""
    decision: Decision = field(default_factory=Decision)
    included: tuple[int, ...] | None = None
    cancel_reason: str | None = None


def _held(paying: set[int]) -> dict[int, int]:
    """The balances the billing decision sees: one credit for each publisher whose credit is
    held for this message, none for the others (whatever their balance was when read: another
    sender may be spending it)."""
    return dict.fromkeys(paying, 1)


def _prepare(
    store: SqlStore,
    settings: Settings,
    row: dict[str, Any],
    now: datetime,
    contexts: dict[int, dict[str, Any]] | None = None,
) -> _Prepared:
    links = render.Links(settings.public_url)
    msg_id = render.message_id(row["message_id"], settings.mail_from)
    if row["flagged_at"] is not None and row["kind"] != "confirm":
        # a confirmation is tried even so: the reader asked for it (at most one an hour), and
        # the server taking it clears the flag — else the address were lost for good
        return _Prepared(None, cancel_reason="address flagged after repeated hard failures")
    if row["kind"] in ("confirm", "item"):
        ctx: dict[str, Any] | None
        if contexts is not None and row["id"] in contexts:
            ctx = dict(contexts[row["id"]])
        else:
            ctx = repo.item_context(store, row["id"])
        if ctx is None:
            return _Prepared(None, cancel_reason="subscription no longer exists")
        sub = ctx["subscription"]
        if row["kind"] == "confirm":
            if sub["status"] != "pending":
                return _Prepared(None, cancel_reason=f"subscription is {sub['status']}")
            r = render.confirmation(sub, ctx["feed"], links)
            decision = Decision()
        else:
            if sub["status"] != "active":
                return _Prepared(None, cancel_reason=f"subscription is {sub['status']}")
            if ctx["entry"] is None:
                return _Prepared(None, cancel_reason="entry no longer stored")
            pub = ctx["sponsors"].get(sub["feed_id"])
            paying = repo.hold_credits(store, row["id"], [] if pub is None else [pub], now,
                                       note=f"realtime feed {sub['feed_id']}")
            decision = decide_realtime(
                sub["reader_id"], sub["feed_id"], ctx["sponsors"], _held(paying)
            )
            r = render.item(
                sub, ctx["feed"], ctx["entry"], links, sponsor_exhausted=bool(decision.exhausted)
            )
        msg = render.to_email(r, to=sub["email"], mail_from=settings.mail_from, msg_id=msg_id,
                              date=now)
        return _Prepared(msg, r.subject, decision)
    dctx = repo.digest_context(store, row["id"])
    if dctx is None:
        return _Prepared(None, cancel_reason="digest issue no longer exists")
    items = [i for i in dctx["items"] if i["subscription_status"] == "active"]
    if not items:
        return _Prepared(None, cancel_reason="no items left (all their subscriptions ended)")
    sponsors = dctx["sponsors"]
    paying = repo.hold_credits(
        store, row["id"], {sponsors[i["feed_id"]] for i in items if i["feed_id"] in sponsors},
        now, note="digest issue",
    )
    decision = decide_digest(
        row["reader_id"], [i["feed_id"] for i in items], sponsors, _held(paying)
    )
    exhausted = sorted(
        {
            render._title(i["feed_title"], i["feed_url"])
            for i in items
            if dctx["sponsors"].get(i["feed_id"]) in decision.exhausted
        }
    )
    r = render.digest(dctx["reader"], row["schedule"] or "daily", items, links,
                      exhausted_feeds=exhausted)
    msg = render.to_email(r, to=row["email"], mail_from=settings.mail_from, msg_id=msg_id,
                          date=now)
    # every item of the issue is settled by this send: those of ended subscriptions are dropped
    # on purpose (the reader unsubscribed), the rest are in the mail
    return _Prepared(msg, r.subject, decision, tuple(i["item_id"] for i in dctx["items"]))


class _Pacer:
    """At most ``rate`` sends per second (0: unlimited); providers throttle bursts."""

    def __init__(self, rate: float, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        self.gap = 1.0 / rate if rate > 0 else 0.0
        self.clock = clock
        self.sleep = sleep
        self.next_at = 0.0

    async def wait(self) -> None:
        if not self.gap:
            return
        now = self.clock()
        if now < self.next_at:
            await self.sleep(self.next_at - now)
            now = self.next_at
        self.next_at = now + self.gap


async def _deliver(
    store: SqlStore,
    settings: Settings,
    session: SmtpSession,
    row: dict[str, Any],
    now: datetime,
    report: SendReport,
    contexts: dict[int, dict[str, Any]] | None = None,
    claims: repo.OutboxClaims | None = None,
    give_up_after: timedelta = POLICY_GIVE_UP_AFTER,
) -> bool:
    """One outbox row. Returns False when the pass should stop (temporary failure).

    With ``claims``, a row another sender is sending (or has sent since it was read) is skipped.
    """
    if claims is None:
        return await _deliver_claimed(store, settings, session, row, now, report, contexts,
                                      give_up_after)
    if not claims.claim(row["id"], now):
        return True
    try:
        return await _deliver_claimed(store, settings, session, row, now, report, contexts,
                                      give_up_after)
    finally:
        claims.release(row["id"])


async def _deliver_claimed(
    store: SqlStore,
    settings: Settings,
    session: SmtpSession,
    row: dict[str, Any],
    now: datetime,
    report: SendReport,
    contexts: dict[int, dict[str, Any]] | None = None,
    give_up_after: timedelta = POLICY_GIVE_UP_AFTER,
) -> bool:
    if row["reader_id"] in report.flagged_readers:
        row = {**row, "flagged_at": now}
    if row["kind"] == "digest" and row["flagged_at"] is None:
        # closed before it is rendered: what is rendered now is what any resend will hold
        repo.close_issue(store, row["id"], now)
    prep = _prepare(store, settings, row, now, contexts)
    if prep.msg is None:
        repo.cancel(store, row["id"], prep.cancel_reason or "cancelled",
                    status="failed" if row["flagged_at"] is not None else "cancelled")
        report.cancelled += 1
        return True
    attempt = await session.send(prep.msg, sender=_envelope(settings.mail_from),
                                 recipient=row["email"])
    if attempt.outcome == "ok":
        repo.mark_sent(
            store,
            row["id"],
            now,
            subject=prep.subject,
            charges=prep.decision.charges,
            included_items=prep.included,
            # a reader's failure count is reset only when it has one (saves a write per mail);
            # a failure earlier in this pass is one, though the row read before it says 0
            reset_failures=bool(row.get("hard_failures", 1))
            or row["reader_id"] in report.failed_readers,
        )
        report.sent += 1
        return True
    if attempt.outcome == "permanent":
        flagged = repo.mark_failed(store, row["id"], now, attempt.detail,
                                   flag_after=HARD_FAILURES_TO_FLAG,
                                   count=attempt.against_reader)
        report.failed += 1
        if attempt.against_reader:
            report.failed_readers.add(row["reader_id"])
        if flagged:
            report.flagged += 1
            report.flagged_readers.add(row["reader_id"])
        report.errors.append(f"{row['dedupe_key']}: {attempt.detail}")
        return True
    detail = attempt.detail
    if detail.startswith(POLICY_REFUSAL) and attempt.code is not None and attempt.code >= 500:
        # A 5xx refusal of us is retried, but not for ever: it held the publisher's credit
        # and the queue's attention without end. Counted from the first refusal in a row,
        # kept in the row's last error (the server's reply follows it).
        since = policy_since(row.get("last_error"), POLICY_REFUSAL) or now
        reply = detail[len(POLICY_REFUSAL):]
        detail = f"{POLICY_REFUSAL}since {since.isoformat()}: {reply}"
        if policy_gives_up(since, now, give_up_after):
            days = f"{give_up_after.total_seconds() / 86400:g}"
            reason = (f"gave up after {days} days of refusals ({int(row['attempts']) + 1} "
                      f"attempts): {detail}")
            # failed for good, on record; the credit hold released; never the reader's count
            repo.mark_failed(store, row["id"], now, reason, flag_after=HARD_FAILURES_TO_FLAG,
                             count=False)
            logging.getLogger(__name__).warning("notification %s: %s", row["dedupe_key"],
                                                reason)
            report.failed += 1
            report.errors.append(f"{row['dedupe_key']}: {reason}")
            return True
    if detail.startswith(POLICY_REFUSAL):
        logging.getLogger(__name__).warning("notification %s: %s", row["dedupe_key"], detail)
    again = retry_at(now, int(row["attempts"]) + 1)
    if attempt.server_down:  # the queue waits, in order, not this message alone
        repo.hold_queue(store, row["id"], now, detail, again)
    else:
        repo.mark_temporary(store, row["id"], now, detail, again)
    report.retried += 1
    report.deferred = True
    report.errors.append(f"{row['dedupe_key']}: {detail}")
    return False


def _envelope(mail_from: str) -> str:
    from email.utils import parseaddr

    return parseaddr(mail_from)[1] or mail_from


async def send_due(
    store: SqlStore,
    settings: Settings,
    now: datetime | None = None,
    *,
    options: NotifyOptions | None = None,
    only_ids: set[int] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> SendReport:
    """Deliver every notification and digest due at ``now`` (default: the clock), then return.

    Stops early (leaving the rest pending, oldest first next time) when the server answers 4xx or
    cannot be reached: a throttling provider is slowed down, not hammered. While a row waits for
    an unavailable server (its retry still ahead), rows after it are not sent: the backlog drains
    oldest first once the server is back.
    """
    opts = options or NotifyOptions.from_settings(settings)
    if only_ids is None:
        # Readers of a duplicate feed the crawl did not move (recorded before the link
        # existed, or by another writer) follow it before anything is sent; see
        # follow_duplicates for why the crawl's own transaction moves the rest.
        move_duplicate_subscriptions(store, now or _utcnow(), settings)
    report = SendReport()
    session = SmtpSession(SmtpConfig.parse(settings.smtp_url), timeout=opts.smtp_timeout)
    pacer = _Pacer(opts.rate)
    claims = repo.OutboxClaims(store)
    last_id: int | None = None
    try:
        while True:
            at = now or _utcnow()
            rows = repo.due_outbox(
                store, at, opts.batch, ids=sorted(only_ids) if only_ids is not None else None,
                after_id=last_id,
            )
            if not rows:
                break
            held = repo.queue_held_from(store, at)
            contexts = repo.item_contexts(
                store, [r["id"] for r in rows if r["kind"] in ("confirm", "item")]
            )
            for row in rows:
                if should_stop is not None and should_stop():
                    return report
                if held is not None and row["id"] > held:
                    report.deferred = True  # behind a row waiting for the server
                    return report
                last_id = row["id"]
                await pacer.wait()
                ok = await _deliver(
                    store, settings, session, row, now or _utcnow(), report, contexts, claims,
                    opts.policy_give_up_after,
                )
                if not ok:
                    return report
            if only_ids is not None:
                break
    finally:
        claims.close()
        await session.aclose()
    return report


async def send_one(store: SqlStore, settings: Settings, outbox_id: int) -> SendReport:
    """Try one outbox row now (the confirmation mail right after subscribing)."""
    return await send_due(store, settings, only_ids={outbox_id},
                          options=NotifyOptions.from_settings(settings))


async def run_forever(store: SqlStore, settings: Settings, stop: asyncio.Event) -> None:
    """The ``run`` command's notifier: a pass every few seconds until ``stop`` is set.

    Each pass runs in a worker thread with its own event loop: its database calls are blocking
    (SQLAlchemy), and the loop of ``run`` is shared with the crawler and the web app. ``stop``
    is honoured between messages.
    """
    opts = NotifyOptions.from_settings(settings)
    log = logging.getLogger(__name__)

    def one_pass() -> SendReport:
        return asyncio.run(send_due(store, settings, options=opts, should_stop=stop.is_set))

    while not stop.is_set():
        try:
            await asyncio.to_thread(one_pass)
        except FairfetchError as exc:  # the database refused: its one line says it all
            log.error("notify pass failed: %s", exc)
            log.debug("the refused notify pass", exc_info=exc)
        except Exception:  # a bad pass must not end the notifier; it is logged, and retried
            log.exception("notify pass failed")
        try:
            await asyncio.wait_for(stop.wait(), timeout=opts.poll_seconds)
        except TimeoutError:
            pass
