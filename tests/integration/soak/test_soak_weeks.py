"""Weeks of life on one store: the crawler, the health rules, the notifier and the store together,
day after day under an injected clock, on SQLite and PostgreSQL.

Seven feeds on a loopback server whose answers are scripted per simulated day (publishing, an
edit, items falling out of the window, a 429 for three days, a 503 with an HTTP-date Retry-After,
an outage of 500s and a timeout, a 301 move whose old URL a user adds again later, a 410), readers
on real-time mail, daily and weekly digests with --only/--except filters, an owner-paid feed whose
credit runs out and is topped up, confirmations taken from the mails themselves, an unsubscribe and
a re-subscribe, an SMTP server that refuses for a day, a crawl pass killed midway, and every step a
fresh process (store reopened, a new Crawler). After every step one checker holds the whole
system to its promises, against an oracle the test keeps itself (what the server handed out when,
what the SMTP server accepted)."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import sqlalchemy as sa
from typer.testing import CliRunner

from fairfetch.cli import app
from fairfetch.config import Settings
from fairfetch.crawl import Crawler
from fairfetch.notify.options import NotifyOptions
from fairfetch.notify.service import send_due
from fairfetch.notify.subscriptions import (
    SubscriptionRequest,
    request_subscription,
    unsubscribe_email,
)
from fairfetch.store import SqlStore, open_store, websub_repo
from fairfetch.store import notify_repo as repo
from fairfetch.store import tables as T
from fairfetch.store.notify_subscriptions import confirm
from fairfetch.websub.service import WebSubService
from fairfetch.websub.signature import sign

from .conftest import (
    CONFIRM,
    T0,
    CountingHandler,
    Mail,
    SimFeed,
    Web,
    counting_smtp,
    scripted_web,
)

FAST = NotifyOptions(rate=0.0)
STEPS = (2, 10, 18)  # the hours of the day at which the process runs
DAYS = 14
#: After DAYS: the drain on the third Wednesday, then our own outage (no process runs for three
#: weeks while the feeds publish on), two days back, and the drain of the sixth Wednesday.
AFTER_OUR_OUTAGE = (40, 41)
DRAINS = ((16, 10), (44, 10))
LAST = 44
#: Feeds whose WebSub hub pings at every step, beside the polling: a healthy one, the one
#: throttled for three days, the one down for three.
PINGED = ("alpha", "beta", "delta")
WEBSUB_SECRET = "s" * 40
HEALTH = ("status", "error_count", "last_error", "last_success_at", "last_fetched_at")


@dataclass
class Sub:
    email: str
    feed: str
    mode: str = "realtime"
    only: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    weekday: int = 2  # Wednesday, for the weekly ones
    hour: int = 8
    tz: str = "UTC"
    via: str = "/feed.xml"  # the URL the reader gave
    #: [start, end) of each stretch the subscription was confirmed and not ended
    active: list[list[datetime | None]] = field(default_factory=list)
    token: str | None = None

    def accepts(self, cats: tuple[str, ...]) -> bool:
        have = {c.casefold() for c in cats}
        if self.only and not have & {c.casefold() for c in self.only}:
            return False
        return not have & {c.casefold() for c in self.exclude}

    def active_at(self, t: datetime) -> bool:
        return any(s is not None and s <= t and (e is None or t < e) for s, e in self.active)

    def on_from(self, seen: datetime, until: datetime) -> bool:
        """Confirmed when the item was seen, and not ended since, up to ``until`` (a stretch
        that ended cancels what it left waiting: a later re-subscription does not revive it)."""
        return any(s is not None and s <= seen and (e is None or until < e)
                   for s, e in self.active)

    def deadline(self, seen: datetime) -> datetime:
        """When the item seen at ``seen`` is due: at once, or its digest's issue (08:00 UTC)."""
        if self.mode == "realtime":
            return seen
        zone = ZoneInfo(self.tz)
        local = seen.astimezone(zone).date()
        while True:
            # A local hour skipped by DST reads as the instant after the gap (fold=0).
            at = datetime.combine(local, time(self.hour), tzinfo=zone).astimezone(UTC)
            if at > seen and (self.mode == "daily" or local.weekday() == self.weekday):
                return at
            local += timedelta(days=1)


class Soak:
    def __init__(self, db: str, webw: Web, smtp: CountingHandler, smtp_url: str) -> None:
        self.db = db
        self.web = webw
        self.smtp = smtp
        self.settings = Settings(
            db=db,
            allow_networks=("127.0.0.1/32",),
            resolve=("*.test:127.0.0.1",),
            connect_timeout=5.0,
            first_byte_timeout=1.5,
            total_timeout=10.0,
            smtp_url=smtp_url,
            public_url="https://news.example.test",
            mail_from="fairfetch <mail@news.example.test>",
        )
        self.subs: list[Sub] = []
        self.stored: dict[str, tuple[int, str]] = {}  # entry_id -> (feed id, title) ever seen
        self.health_before: dict[str, dict[str, Any]] = {}
        self.now = T0
        self.smtp_ok_steps: list[datetime] = []
        self.pass_complete = True
        self.killed = False
        self.sigkilled = False
        self.summary: Any = None

    # --- the world's actions -------------------------------------------------------------

    def subscribe(self, store: SqlStore, sub: Sub) -> None:
        req = SubscriptionRequest.build(sub.email, mode=sub.mode, only=sub.only or None,
                                        exclude=sub.exclude or None,
                                        weekday=sub.weekday if sub.mode == "weekly" else None,
                                        hour=None if sub.mode == "realtime" else sub.hour,
                                        tz=sub.tz)
        request_subscription(store, req, self.web.url(sub.feed, sub.via), now=self.now)
        if sub not in self.subs:
            self.subs.append(sub)

    def confirm_from_mail(self, store: SqlStore, sub: Sub) -> None:
        """Follow the newest confirmation link mailed to the reader for that feed."""
        links = [m for m in self.smtp.mails
                 if m.rcpt == sub.email and m.kind == "confirm"
                 and (f"Feed {sub.feed}" in m.text or f"//{sub.feed}.test:" in m.text)]
        assert links, f"no confirmation mail reached {sub.email} for {sub.feed}"
        match = CONFIRM.search(links[-1].text)
        assert match is not None
        confirm(store, match.group(1), self.now)
        sub.active.append([self.now, None])

    def unsubscribe(self, store: SqlStore, sub: Sub) -> None:
        assert unsubscribe_email(store, sub.email, self.web.url(sub.feed), now=self.now) == 1
        sub.active[-1][1] = self.now

    def sub(self, email: str, feed: str) -> Sub:
        [s] = [s for s in self.subs if s.email == email and s.feed == feed]
        return s

    # --- the oracle ----------------------------------------------------------------------

    def expected(self, sub: Sub) -> dict[str, datetime]:
        """Token -> when it is due, for the items this subscription must get."""
        out: dict[str, datetime] = {}
        feed = self.web.feeds[sub.feed]
        for it in feed.items:
            seen = self.web.first_served.get(it.token)
            if seen is None or it.token in self.web.served_in_first_read:
                continue
            if sub.active_at(seen) and sub.accepts(it.categories):
                out[it.token] = sub.deadline(seen)
        return out

    # --- the checker ---------------------------------------------------------------------

    def check(self, store: SqlStore, *, final: bool = False) -> None:
        with store.engine.connect() as conn:
            rows = conn.execute(sa.select(T.entries.c.feed_id, T.entries.c.entry_id,
                                          T.entries.c.title)).all()
            feeds = {r.id: r for r in conn.execute(sa.select(T.feeds)).all()}
        # No entry duplicated: one row per item across the whole store (every guid is unique).
        ids = Counter(r.entry_id for r in rows)
        assert [e for e, n in ids.items() if n > 1] == [], "an item stored twice"
        now_stored = {r.entry_id: (r.feed_id, r.title) for r in rows}
        # No item ever stored is lost, and it stays with its feed.
        lost = {e for e in self.stored if e not in now_stored}
        assert lost == set(), f"stored items lost: {sorted(lost)}"
        moved = {e for e, (f, _t) in self.stored.items() if now_stored[e][0] != f}
        assert moved == set(), f"items moved to another feed: {sorted(moved)}"
        self.stored = now_stored
        # Everything the crawler was handed is stored (under its identity: the guid).
        by_guid = {it.guid: it for f in self.web.feeds.values() for it in f.items}
        missing = sorted(self.web.served_guids - set(now_stored))
        assert missing == [], f"items served but not stored: {missing}"
        # An edited item is the same entry (counted once above), with its new title.
        edited = [it for it in by_guid.values() if it.title.endswith(" edited")]
        for it in edited:
            assert now_stored[it.guid][1] == it.title, (it.guid, now_stored[it.guid])

        self._check_mail(final=final)
        self._check_health(store, feeds)
        self._check_stats(store)

    def _check_mail(self, *, final: bool) -> None:
        now = self.now
        mails = list(self.smtp.mails)
        items: Counter[tuple[str, str]] = Counter()
        digested: Counter[tuple[str, str]] = Counter()
        for m in mails:
            if m.kind == "item":
                assert len(set(m.tokens)) == 1, (m.subject, m.tokens)
                items[(m.rcpt, m.tokens[0])] += 1
            elif m.kind == "digest":
                assert len(m.tokens) == len(set(m.tokens)), f"a digest lists an item twice: {m}"
                for t in m.tokens:
                    digested[(m.rcpt, t)] += 1
        twice = [k for k, n in (items + digested).items() if n > 1]
        assert twice == [], f"sent twice: {twice}"
        # Each item mailed (alone or in a digest) was due to a subscription of that reader that
        # was confirmed when the item was first seen and had not ended when the mail went.
        for m in mails:
            if m.kind == "confirm":
                continue
            for tok in set(m.tokens):
                feed = tok.split("-")[1]
                seen = self.web.first_served[tok]
                owners = [
                    s for s in self.subs
                    if s.email == m.rcpt and s.feed == feed
                    and (s.mode == "realtime") == (m.kind == "item")
                    and tok in self.expected(s) and s.on_from(seen, m.at)
                ]
                assert owners, f"{m.kind} of {tok} (seen {seen}) to {m.rcpt} at {m.at}: not due"
        # Each item due by now to a subscription still on, the server accepting, has gone.
        want_items: dict[tuple[str, str], datetime] = {}
        want_digest: dict[tuple[str, str], datetime] = {}
        for s in self.subs:
            target = want_items if s.mode == "realtime" else want_digest
            for tok, due in self.expected(s).items():
                if s.on_from(self.web.first_served[tok], now):
                    target[(s.email, tok)] = due
        if self.smtp_ok_steps and self.smtp_ok_steps[-1] == now:
            late = sorted(k for k, due in want_items.items() if due <= now and k not in items)
            assert late == [], f"due, the server accepting, yet not sent: {late}"
            late_d = sorted(k for k, due in want_digest.items()
                            if due <= now and k not in digested)
            assert late_d == [], f"digest items due yet not sent: {late_d}"
        if final:  # a drain: the server accepts, so everything due by now was checked above
            assert self.smtp_ok_steps[-1] == now

    def _check_health(self, store: SqlStore, feeds: dict[int, Any]) -> None:
        now = self.now
        with store.engine.connect() as conn:
            crawls = conn.execute(sa.select(T.crawls.c.feed_id, T.crawls.c.outcome)
                                  .order_by(T.crawls.c.id)).all()
        trailing: Counter[int] = Counter()
        for c in crawls:
            if c.outcome in ("ok", "not_modified"):
                trailing[c.feed_id] = 0
            elif c.outcome == "error":
                trailing[c.feed_id] += 1
        for fid, f in feeds.items():
            # error_count counts the failures since the last success, no more, no fewer.
            assert f.error_count == trailing[fid], (f.url, f.error_count, trailing[fid])
            if f.status == "dead":
                continue
            assert f.next_crawl_at is not None, f"{f.url} alive with no schedule"
            nxt = _aware(f.next_crawl_at)
            if self.pass_complete:
                assert nxt > now, f"{f.url} still due after a pass: {self.summary}"
            assert nxt >= now - timedelta(seconds=self.settings.max_interval), f"{f.url} stuck"
            assert nxt <= now + timedelta(days=1, minutes=5), f"{f.url} put off past a day"
        by_url = {f.original_url: f for f in feeds.values()}
        for name, snap in self.health_before.items():
            f = by_url[self.web.url(name)]
            assert {k: getattr(f, k) for k in HEALTH} == snap, f"throttled {name}'s health moved"

    def health(self, store: SqlStore, name: str) -> dict[str, Any]:
        with store.engine.connect() as conn:
            f = conn.execute(sa.select(T.feeds).where(
                T.feeds.c.original_url == self.web.url(name))).one()
        return {k: getattr(f, k) for k in HEALTH}

    def _check_stats(self, store: SqlStore) -> None:
        now = self.now
        probe = self.settings.dead_probe_interval
        got = store.stats(now, dead_probe_interval=probe)
        hour, day = now - timedelta(hours=1), now - timedelta(days=1)
        with store.engine.connect() as conn:
            q = conn.execute
            f, c = T.feeds.c, T.crawls.c
            all_feeds = q(sa.select(f.status, f.next_crawl_at, f.last_fetched_at)).all()
            by_status = dict(Counter(r.status for r in all_feeds))
            total = len(all_feeds)
            n_entries = len(q(sa.select(T.entries.c.id)).all())
            all_crawls = q(sa.select(c.at, c.outcome, c.error_kind, c.politeness_key, c.bytes)
                           .where(c.at >= day)).all()

            def outcomes(since: datetime) -> dict[str, int]:
                out: Counter[str] = Counter()
                for r in all_crawls:
                    if _aware(r.at) >= since:
                        k = r.error_kind
                        out[f"error:{k}" if r.outcome == "error" and k else r.outcome] += 1
                return dict(out)

            throttles = Counter(r.politeness_key for r in all_crawls if r.outcome == "throttled")
            bytes_day = sum(r.bytes or 0 for r in all_crawls)
            bytes_hour = sum(r.bytes or 0 for r in all_crawls if _aware(r.at) >= hour)
            feeds = all_feeds
        due = 0
        next_hour = 0
        for st, nxt, last in feeds:
            nxt = _aware(nxt) if nxt is not None else None
            if st == "dead":
                probe_at = (nxt if nxt is not None
                            else _aware(last) + timedelta(seconds=probe) if last else None)
                due += probe_at is None or probe_at <= now
            else:
                due += nxt is not None and nxt <= now
                next_hour += nxt is not None and now < nxt <= now + timedelta(hours=1)
        assert got["feeds"]["total"] == total
        assert got["feeds"]["by_status"] == by_status
        assert got["entries"] == n_entries
        assert got["crawls"]["last_hour"] == outcomes(hour)
        assert got["crawls"]["last_day"] == outcomes(day)
        assert {t["key"]: t["throttles"] for t in got["throttles_by_key"]} == dict(throttles)
        assert got["bytes"] == {"last_hour": bytes_hour, "last_day": bytes_day}
        assert got["queue"]["due"] == due
        assert got["queue"]["next_hour"] == next_hour


def _aware(t: datetime) -> datetime:
    return t if t.tzinfo is not None else t.replace(tzinfo=UTC)


#: A crawl pass at a given simulated time, in a process of its own: prints a line per result.
_KILLED_PASS = """
import asyncio, json, sys
from datetime import datetime
from fairfetch.config import Settings
from fairfetch.crawl import Crawler
from fairfetch.store import open_store

async def main():
    args = json.loads(sys.argv[1])
    now = datetime.fromisoformat(args["now"])
    store = open_store(args["db"])
    settings = Settings(**args["settings"])
    def said(result):
        print(result.feed_id, result.outcome, flush=True)
    async with Crawler(store, settings, clock=lambda: now) as crawler:
        await crawler.crawl_due(on_result=said)
    print("done", flush=True)

asyncio.run(main())
"""


async def _sigkilled_pass(soak: Soak, store: SqlStore) -> None:
    """A pass in another process, SIGKILLed once it has reported its first result. What it
    fetched and did not write is as never fetched: the oracle forgets the items first handed
    out to it and not stored, so they count as first seen when the next pass reads them."""
    s = soak.settings
    args = {"now": soak.now.isoformat(), "db": soak.db, "settings": {
        "db": s.db, "allow_networks": list(s.allow_networks), "resolve": list(s.resolve),
        "connect_timeout": s.connect_timeout, "first_byte_timeout": s.first_byte_timeout,
        "total_timeout": s.total_timeout}}
    before = dict(soak.web.first_served)
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", _KILLED_PASS, json.dumps(args), stdout=asyncio.subprocess.PIPE)
    assert proc.stdout is not None
    first = await proc.stdout.readline()
    proc.send_signal(signal.SIGKILL)
    await proc.wait()
    assert first, "the pass died before its first result"
    assert not first.startswith(b"done"), first
    soak.pass_complete = False
    with store.engine.connect() as conn:
        stored = set(conn.execute(sa.select(T.entries.c.entry_id)).scalars())
    for f in soak.web.feeds.values():
        for it in f.items:
            if it.guid in soak.web.served_guids and it.guid not in stored:
                soak.web.served_guids.discard(it.guid)
                if it.token not in before:
                    soak.web.first_served.pop(it.token, None)


async def _cron_pass(soak: Soak, store: SqlStore) -> None:
    """A second crawl pass on the store at the same time (cron's `crawl --once` beside `run`):
    every due feed is crawled by one of the two, or skipped with a reason."""
    async with Crawler(store, soak.settings, clock=lambda: soak.now) as crawler:
        summary = await crawler.crawl_due()
    assert summary.accounted == summary.due, summary


async def _pings(soak: Soak, store: SqlStore, crawler: Crawler, names: tuple[str, ...]) -> None:
    """The hub pings (thin pushes) for these feeds, received and processed by the WebSub
    service of the same process as the pass, its re-fetches going through the pass's crawler
    while the pass runs."""
    service = WebSubService(store, soak.settings, crawler=crawler, clock=lambda: soak.now)
    try:
        for name in names:
            feed = store.find_feed(soak.web.url(name))
            assert feed is not None
            sub = websub_repo.latest_for_feed(store, feed.id)
            assert sub is not None
            body = b"<rss/>"
            answer = await service.receive(
                sub.callback_token, {"x-hub-signature": sign(WEBSUB_SECRET, body, "sha256")},
                body)
            assert answer.status == 202, answer
        await service.process_deliveries()
    finally:
        await service.aclose()


async def _crawl(soak: Soak, store: SqlStore, *, kill_after: int | None = None,
                 pings: tuple[str, ...] = ()) -> None:
    """One crawl pass by a fresh process; ``kill_after`` results, the pass is cancelled (the
    process stopped midway, as by Ctrl-C)."""
    soak.pass_complete = kill_after is None
    async with Crawler(store, soak.settings, clock=lambda: soak.now) as crawler:
        if kill_after is None:
            async def crawl() -> None:
                soak.summary = await crawler.crawl_due()

            await asyncio.gather(crawl(), _pings(soak, store, crawler, pings))
            return
        seen = 0
        task: asyncio.Task[Any]

        def on_result(_r: Any) -> None:
            nonlocal seen
            seen += 1
            if seen == kill_after:
                task.cancel()

        totals: list[int] = []
        task = asyncio.create_task(crawler.crawl_due(on_result=on_result, on_total=totals.append))
        try:
            await task
        except asyncio.CancelledError:
            pass
        else:  # pragma: no cover - the scenario has more feeds than that
            raise AssertionError(f"the pass ended before it could be stopped {totals} {seen}")


async def test_soak_weeks_of_life_on_one_store(db_url: str) -> None:
    with counting_smtp() as (smtp, smtp_url):
        async with scripted_web() as webw:
            await _run(Soak(db_url, webw, smtp, smtp_url))


async def _run(soak: Soak) -> None:
    w = soak.web
    names = ("alpha", "beta", "gamma", "delta", "epsilon", "phi", "omega", "psi")
    for n in names:
        w.feeds[n] = SimFeed(n)
    cats = {
        "beta": [("news",), ("sport",), ()],
        "gamma": [("Sport",), ("NEWS", "tech"), ("tech",)],
    }
    for n in names:  # a backlog for the first read
        for i in range(3):
            c = cats.get(n, [()])
            w.feeds[n].publish(T0 - timedelta(days=3 - i), c[i % len(c)])

    for day in range(LAST + 1):
        if day > 0:  # the web's day: publishing at 01:00 (seen by the 02:00 pass)
            _publish(soak, day, cats)
        for h in STEPS:
            soak.now = T0 + timedelta(days=day, hours=h)
            if day < DAYS or day in AFTER_OUR_OUTAGE or (day, h) in DRAINS:
                await _step(soak, day, h, cats)
    psi = soak.web.feeds["psi"]
    # the 410; the monthly probe, throttled, and again once the Retry-After has passed
    assert (psi.answers["410"], psi.answers["429"]) == (2, 1), psi.answers


def _publish(soak: Soak, day: int, cats: dict[str, list[tuple[str, ...]]]) -> None:
    f = soak.web.feeds
    at = T0 + timedelta(days=day, hours=1)
    for n, feed in f.items():
        for _ in range(2 if n == "omega" else 1):
            c = cats.get(n, [()])
            feed.publish(at, c[feed.counter % len(c)])
    if day == 4:
        f["alpha"].items[3].title += " edited"
    if day == 6:  # alpha takes down its newest item for two days, then puts it back
        f["alpha"].hidden = {f["alpha"].items[-2].token}
    if day == 8:
        f["alpha"].hidden = set()
    if day == 10:  # omega publishes an item of two days ago again, under a new id
        f["omega"].republish(f["omega"].items[-5])


async def _step(soak: Soak, day: int, h: int, cats: dict[str, list[tuple[str, ...]]]) -> None:
    w = soak.web
    f = w.feeds
    now = w.now = soak.now
    final = day >= DAYS
    f["beta"].mode = "429" if 3 <= day <= 5 and not final else "ok"
    f["gamma"].mode = "503" if 6 <= day <= 7 and not final else "ok"
    f["delta"].mode = ("500" if 3 <= day <= 5 else "ok") if not final else "ok"
    if day == 5 and h == STEPS[0]:
        f["delta"].mode = "timeout"
    f["epsilon"].mode = "moved" if day >= 3 else "ok"
    f["phi"].mode = "410" if day >= 4 and not (day >= 12 or (day == 11 and h > STEPS[1])) else "ok"
    f["psi"].mode = "410" if day >= 2 else "ok"
    if (day, h) == (40, STEPS[0]):  # its monthly probe is throttled: probed again after
        f["psi"].mode = "429"
    if day == 3 and h == STEPS[0]:
        # A feed nobody has added yet, down at first: a reader subscribes by its URL.
        f["kappa"] = SimFeed("kappa", mode="500")
        for i in range(3):
            f["kappa"].publish(now - timedelta(days=3 - i))
    if "kappa" in f:
        f["kappa"].mode = "500" if day < 5 else "ok"
    soak.smtp.refusing = day == 5
    soak.smtp.now = now

    store = open_store(soak.db)  # every step a fresh process
    try:
        if day == 0 and h == STEPS[0]:
            async with Crawler(store, soak.settings, clock=lambda: soak.now) as crawler:
                report = await crawler.add([w.url(n) for n in f])
            assert len(report.added) == len(f), report
            for s in [
                Sub("ana@example.test", "alpha"),
                Sub("ben@example.test", "alpha", mode="daily"),
                Sub("ben@example.test", "beta", mode="daily", exclude=("sport",)),
                Sub("cy@example.test", "gamma", mode="weekly"),
                Sub("cy@example.test", "delta", mode="weekly"),
                Sub("dee@example.test", "beta", only=("news",)),
                Sub("dee@example.test", "gamma", exclude=("sport",)),
                Sub("eve@example.test", "delta"),
                Sub("eve@example.test", "epsilon"),
                Sub("eve@example.test", "phi"),
                Sub("fay@example.test", "omega"),
                Sub("gus@example.test", "alpha"),
                Sub("ben@example.test", "omega", mode="daily"),  # owner-paid, in a digest
                # 02:00 New York: skipped on 8 March 2026 (spring forward), sent at 03:00 EDT
                Sub("jo@example.test", "gamma", mode="daily", hour=2, tz="America/New_York"),
            ]:
                soak.subscribe(store, s)
            omega = store.find_feed(w.url("omega"))
            assert omega is not None
            repo.grant(store, "Omega Media", 3, now, feed_ids=[omega.id])
            for name in PINGED:  # their hub pings at every step (see _pings)
                feed = store.find_feed(w.url(name))
                assert feed is not None
                websub_repo.create_subscription(
                    store, feed_id=feed.id, hub_url="http://127.0.0.1:9/",
                    topic_url=feed.url, secret=WEBSUB_SECRET, requested_lease=86400, now=now)
        elif day == 0 and h == STEPS[1]:
            for s in soak.subs:
                if s.email != "ana@example.test":
                    soak.confirm_from_mail(store, s)
        elif day == 2 and h == STEPS[0]:
            soak.confirm_from_mail(store, soak.sub("ana@example.test", "alpha"))
        elif day == 3 and h == STEPS[0]:
            soak.subscribe(store, Sub("kim@example.test", "kappa"))
        elif day == 3 and h == STEPS[2]:
            # Confirmed before the feed was ever read: its first good read, days later, is
            # still its backlog, and mails nobody.
            soak.confirm_from_mail(store, soak.sub("kim@example.test", "kappa"))
        elif day == 4 and h == STEPS[1]:
            # An operator refreshes the throttled feed: another 429, health untouched.
            async with Crawler(store, soak.settings, clock=lambda: soak.now) as crawler:
                summary = await crawler.refresh([w.url("beta")])
            assert summary.counts["throttled"] == 1, summary
        elif day == 5 and h == STEPS[0]:  # the SMTP server refuses today
            soak.subscribe(store, Sub("ivy@example.test", "alpha", mode="daily"))
        elif day == 5 and h == STEPS[2]:
            # Gus leaves while his mails of the morning wait on the refusing server.
            gus = soak.sub("gus@example.test", "alpha")
            waiting = [t for t, due in soak.expected(gus).items()
                       if due.date() == now.date()]
            assert waiting, "nothing of gus's waits on the server: the scenario lost its point"
            soak.unsubscribe(store, gus)
        elif day == 6 and h == STEPS[1]:
            soak.confirm_from_mail(store, soak.sub("ivy@example.test", "alpha"))
        elif day == 7 and h == STEPS[0]:
            soak.subscribe(store, soak.sub("gus@example.test", "alpha"))
            omega = store.find_feed(w.url("omega"))
            assert omega is not None
            repo.grant(store, "Omega Media", 20, now)
        elif day == 7 and h == STEPS[1]:
            soak.confirm_from_mail(store, soak.sub("gus@example.test", "alpha"))
        elif day == 8 and h == STEPS[1]:
            # A user adds the moved feed's old URL again: it is the same feed.
            async with Crawler(store, soak.settings, clock=lambda: soak.now) as crawler:
                report = await crawler.add([w.url("epsilon")])
            assert report.added == [], report
            assert report.existing == [w.url("epsilon", "/new.xml")], report
        elif day == 9 and h == STEPS[0]:
            # A reader subscribes by the moved feed's old URL: the same feed.
            soak.subscribe(store, Sub("hal@example.test", "epsilon", via="/feed.xml"))
        elif day == 9 and h == STEPS[1]:
            soak.confirm_from_mail(store, soak.sub("hal@example.test", "epsilon"))

        elif day == 11 and h == STEPS[1]:
            # The gone feed is back; its owner asks for a refresh, which revives it.
            f["phi"].mode = "ok"
            async with Crawler(store, soak.settings, clock=lambda: soak.now) as crawler:
                summary = await crawler.refresh([w.url("phi")])
            assert summary.counts["ok"] == 1, summary
        ben_beta = soak.sub("ben@example.test", "beta")
        if (day >= 9 and h == STEPS[1] and ben_beta.active_at(now)
                and now - timedelta(hours=2) in soak.expected(ben_beta).values()):
            # Ben leaves beta's digest while the issue of 08:00 waits with beta's items: it
            # goes without them (his alpha and omega items still in it).
            soak.unsubscribe(store, ben_beta)
        if day == 3 and h == STEPS[0]:
            soak.health_before = {"beta": soak.health(store, "beta")}
        if day == 6 and h == STEPS[0]:
            soak.health_before = {"gamma": soak.health(store, "gamma")}
        if day == 8 and h == STEPS[0]:
            soak.health_before = {}

        # Once, from the second week on, the first pass with three feeds due is stopped after
        # its first result (the rest stay due for the next process).
        due = store.count_due(now, dead_probe_interval=soak.settings.dead_probe_interval)
        kill = day >= 9 and not soak.killed and due >= 3
        soak.killed |= kill
        # Once, from the third week on, a pass in a process of its own is SIGKILLed after its
        # first result (claims, held rows, the writer's queue: all gone with it).
        sigkill = day >= 12 and not soak.sigkilled and due >= 3 and not kill
        soak.sigkilled |= sigkill
        if kill:
            await _crawl(soak, store, kill_after=1)
        elif sigkill:
            await _sigkilled_pass(soak, store)
        else:
            # As under `run`: the crawler and the notifier at once, in one event loop; every
            # other day a cron `crawl --once` (a process of its own) starts beside them.
            # The hub's pings come during the pass, except beside a cron pass: a re-fetch in
            # one process beside another process's pass can still undo a count (known, see
            # test_soak_refresh_beside_other_pass.py); they come after the passes then.
            cron = open_store(soak.db) if day % 2 else None
            jobs: list[Any] = [_crawl(soak, store, pings=() if cron else PINGED),
                               send_due(store, soak.settings, now, options=FAST)]
            if cron is not None:
                jobs.append(_cron_pass(soak, cron))
            try:
                await asyncio.gather(*jobs)
            finally:
                if cron is not None:
                    cron.close()
            if cron is not None:
                async with Crawler(store, soak.settings, clock=lambda: soak.now) as crawler:
                    await _pings(soak, store, crawler, PINGED)
        await send_due(store, soak.settings, now, options=FAST)  # the notifier's next poll
        if not soak.smtp.refusing:
            soak.smtp_ok_steps.append(now)
        soak.check(store, final=final)
        _check_story(soak, store, day, h)
    finally:
        store.close()


def _check_story(soak: Soak, store: SqlStore, day: int, h: int) -> None:
    """The scripted events' own outcomes."""
    w = soak.web
    phi = store.find_feed(w.url("phi"))
    assert phi is not None
    if 4 <= day <= 11:
        assert w.feeds["phi"].requests_after_gone == 1  # no request after the 410
    if 4 <= day < 11 or (day == 11 and h < STEPS[1]):
        assert phi.status == "dead"
        assert phi.next_crawl_at is None
    if day >= 12 or (day == 11 and h >= STEPS[1]):
        assert phi.status == "ok"
    delta = store.find_feed(w.url("delta"))
    assert delta is not None
    if day == 5 and h == STEPS[-1]:  # read at least once a day: the outage was seen
        # (its hub's pings re-fetch it beside the backoff ladder: nine pings and the polls
        # in three days of 500s reach the tenth failure, dead; a ping revives it once it is back)
        assert delta.status in ("error", "dead")
        assert delta.error_count >= 1
    if day >= 8:  # back since day 6, and read again within a day of the backoff
        assert delta.status == "ok"
    eps = store.find_feed(w.url("epsilon"))
    assert eps is not None
    assert eps.original_url == w.url("epsilon")
    if day >= 5:
        assert eps.url == w.url("epsilon", "/new.xml")
        assert store.find_feed(w.url("epsilon", "/new.xml")) == eps
    with store.engine.connect() as conn:
        assert len(conn.execute(sa.select(T.feeds.c.id)).all()) == len(w.feeds)
    if day >= DAYS:
        _check_credits(soak, store)
    if day == LAST:
        _check_stats_command(soak, store)


def _check_stats_command(soak: Soak, store: SqlStore) -> None:
    """`fairfetch stats --json` itself (it reads the wall clock, weeks after the simulated
    ones: its windows are empty and every feed is due): its figures equal the rows."""
    result = CliRunner().invoke(app, ["--db", soak.db, "stats", "--json"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    got = json.loads(result.stdout)
    with store.engine.connect() as conn:
        rows = conn.execute(sa.select(T.feeds.c.status, T.feeds.c.kind)).all()
        n_entries = len(conn.execute(sa.select(T.entries.c.id)).all())
    assert got["feeds"]["total"] == len(rows)
    assert got["feeds"]["by_status"] == dict(Counter(r.status for r in rows))
    assert got["feeds"]["by_kind"] == dict(Counter(r.kind or "unknown" for r in rows))
    assert got["entries"] == n_entries
    assert got["crawls"] == {"last_hour": {}, "last_day": {}}
    # months after the last simulated fetch: every feed is due, a dead one for its probe
    assert got["queue"]["due"] == len(rows)


def _check_credits(soak: Soak, store: SqlStore) -> None:
    """The owner-paid feed: the publisher paid one credit per real-time mail and one per digest
    issue holding its items while it had any, never went below zero, and each mail it did not
    pay for told the reader so."""
    mails: list[Mail] = [
        m for m in soak.smtp.mails
        if (m.rcpt == "fay@example.test" and m.kind == "item")
        or (m.kind == "digest" and any(t.startswith("ITEM-omega-") for t in m.tokens))
    ]
    assert any(m.kind == "digest" for m in mails)
    paid = [m for m in mails if "no longer pays" not in m.text]
    unpaid = [m for m in mails if "no longer pays" in m.text]
    ledger = repo.ledger(store)
    granted = sum(r["amount"] for r in ledger if r["kind"] == "grant")
    charged = -sum(r["amount"] for r in ledger if r["kind"] == "charge" and r["publisher_id"])
    assert soak.killed, "no pass was stopped: the scenario lost its point"
    assert soak.sigkilled, "no pass was killed: the scenario lost its point"
    # Readers pay for each mail nobody paid for: a real-time mail of an unsponsored feed (or of
    # the sponsored one run dry), a digest issue with an unsponsored item (or one run dry).
    readers_owe = 0
    for m in soak.smtp.mails:
        if m.kind == "confirm":
            continue
        sponsored = [t for t in m.tokens if t.startswith("ITEM-omega-")]
        others = len(m.tokens) - len(sponsored)
        readers_owe += bool(others or "no longer pays" in m.text)
    readers_paid = -sum(r["amount"] for r in ledger if r["kind"] == "charge" and r["reader_id"])
    assert readers_paid == readers_owe
    assert not soak.sub("ben@example.test", "beta").active_at(soak.now), "ben never left beta"
    assert granted == 23
    assert charged == len(paid)
    assert unpaid, "the credit never ran out: the scenario lost its point"
    assert len(paid) <= granted
    [bal] = [b for b in repo.balances(store) if b["name"] == "Omega Media"]
    assert bal["balance"] == granted - charged >= 0  # nothing held: nothing of it waits
