"""`fairfetch run` killed (SIGKILL) at chosen points, restarted, and checked for the nevers.

Real processes: the testbed on 127.0.0.1 (its clock makes the feeds publish), an aiosmtpd sink
in this process, `fairfetch run` as a subprocess on SQLite and PostgreSQL. Each kill point is
reached by waiting for an observable event (a request held at the testbed, a message held at the
sink before its 250), never by sleeping. After every restart the run must reach the same end:
every new item stored once, mailed once to each real-time subscriber (one Message-ID per
(reader, item); a copy only for the message that was on the wire when the process died, with the
same Message-ID), queued once in the digest reader's next issue, no feed stuck, nothing pending.
"""

from __future__ import annotations

import asyncio
import email
import email.policy
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from fairfetch.config import Settings
from fairfetch.notify.render import message_id
from fairfetch.notify.service import send_due
from fairfetch.notify.sink import LoopbackController
from fairfetch.store import FeedRecord, SqlStore, open_store
from fairfetch.testing import Testbed, testbed_thread

TOKEN = "chaos-admin-token"
GROWING = 3
PERIOD = 600.0
#: generous bound for one observable event; reaching it is a failure, never a timing assertion
DEADLINE = 60.0


# --- the SMTP sink ---------------------------------------------------------------------------


@dataclass
class Received:
    rcpt: tuple[str, ...]
    message_id: str
    subject: str
    text: str


@dataclass
class SinkHandler:
    """Keeps every message; can hold the n-th message's DATA before answering 250."""

    received: list[Received] = field(default_factory=list)
    cond: threading.Condition = field(default_factory=threading.Condition)
    hold_at: int | None = None  # index in ``received`` whose 250 waits for ``release``
    release: threading.Event = field(default_factory=threading.Event)

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        msg = email.message_from_bytes(envelope.original_content, policy=email.policy.default)
        assert isinstance(msg, EmailMessage)
        body = msg.get_body(("plain",))
        text = body.get_content() if body is not None else ""
        with self.cond:
            index = len(self.received)
            self.received.append(
                Received(tuple(envelope.rcpt_tos), str(msg["Message-ID"]), str(msg["Subject"]),
                         text)
            )
            self.cond.notify_all()
            hold = self.hold_at == index
        if hold:
            await asyncio.get_running_loop().run_in_executor(None, self.release.wait)
        return "250 OK"

    def wait_for(self, what: str, pred: Callable[[list[Received]], bool]) -> None:
        with self.cond:
            if not self.cond.wait_for(lambda: pred(self.received), timeout=DEADLINE):
                raise AssertionError(f"the sink never saw {what}: {self.summary()}")

    def summary(self) -> list[tuple[tuple[str, ...], str, str]]:
        return [(r.rcpt, r.message_id, r.subject) for r in self.received]


@pytest.fixture
def sink() -> Iterator[tuple[SinkHandler, int]]:
    handler = SinkHandler()
    controller = LoopbackController(handler, hostname="127.0.0.1", port=0)
    controller.start()
    try:
        yield handler, int(controller.port)
    finally:
        handler.release.set()
        controller.stop()


# --- the process under test ------------------------------------------------------------------


class Run:
    """One `fairfetch run` subprocess."""

    def __init__(self, env: dict[str, str], db: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "fairfetch", "--db", db, "run", "--host", "127.0.0.1",
             "--port", "0"],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()  # the announcement, once the web server listens
        found = re.search(r"(http://127\.0\.0\.1:\d+)", line)
        if found is None:
            self.proc.kill()
            _, err = self.proc.communicate()
            raise AssertionError(f"run did not start: {line!r} {err[-3000:]}")
        self.url = found.group(1)

    def refresh(self, feed_id: int) -> dict[str, Any]:
        req = urllib.request.Request(
            f"{self.url}/api/v1/feeds/{feed_id}/refresh", method="POST", data=b"",
            headers={"Authorization": f"Bearer {TOKEN}"},
        )
        with urllib.request.urlopen(req, timeout=DEADLINE) as resp:
            return dict(json.loads(resp.read()))

    def kill(self) -> None:
        assert self.proc.poll() is None, f"run died on its own: {self.proc.communicate()[1]}"
        self.proc.send_signal(signal.SIGKILL)
        self.proc.communicate(timeout=DEADLINE)

    def stop(self) -> str:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        _, err = self.proc.communicate(timeout=DEADLINE)
        return err


def _cli(env: dict[str, str], db: str, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "fairfetch", "--db", db, *args],
        env=env, capture_output=True, text=True, timeout=DEADLINE, check=False,
    )
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done.stdout


def _until(what: str, pred: Callable[[], bool]) -> None:
    """Wait for a condition in the database (there is no event to wait on across processes)."""
    end = time.monotonic() + DEADLINE
    while not pred():
        if time.monotonic() > end:
            raise AssertionError(f"never happened: {what}")
        time.sleep(0.02)


# --- the scenario ----------------------------------------------------------------------------


@dataclass
class World:
    testbed: Testbed
    sink: SinkHandler
    env: dict[str, str]
    db: str
    engine: sa.Engine
    feed_ids: list[int]

    def q(self, sql: str, **params: Any) -> list[Any]:
        with self.engine.connect() as conn:
            return list(conn.execute(sa.text(sql), params))

    def scalar(self, sql: str, **params: Any) -> Any:
        with self.engine.connect() as conn:
            return conn.execute(sa.text(sql), params).scalar()


def _item_rows(w: World) -> int:
    return int(w.scalar("SELECT count(*) FROM notify_outbox WHERE kind = 'item'"))


def _entries(w: World) -> int:
    return int(w.scalar("SELECT count(*) FROM entries"))


@pytest.fixture
def world(
    tmp_path: Path, db_url: str, sink: tuple[SinkHandler, int]
) -> Iterator[World]:
    handler, port = sink
    with testbed_thread(
        7, blogs=0, letterbox=0, letterbox_custom=0, podcasts=0, growing=GROWING,
        growing_period=PERIOD, edge_copies=0,
    ) as tb:
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("FAIRFETCH_")},
            **tb.env(),
            "FAIRFETCH_SMTP_URL": f"smtp://127.0.0.1:{port}",
            "FAIRFETCH_PUBLIC_URL": "http://127.0.0.1:9",
            "FAIRFETCH_ADMIN_TOKEN": TOKEN,
            "FAIRFETCH_NOTIFY_POLL": "0.05",
            "FAIRFETCH_NOTIFY_RATE": "0",
            "FAIRFETCH_OBEY_ROBOTS": "false",
            "NO_COLOR": "1",
            "COLUMNS": "300",
        }
        if "FAIRFETCH_TEST_PG" in os.environ:
            env["FAIRFETCH_TEST_PG"] = os.environ["FAIRFETCH_TEST_PG"]
        urls = [tb.url(f"growing{n}.test", "/feed.xml") for n in range(GROWING)]
        _cli(env, db_url, "feeds", "add", *urls)
        engine = sa.create_engine(db_url)
        try:
            with engine.connect() as conn:
                ids = [
                    int(conn.execute(
                        sa.text("SELECT id FROM feeds WHERE url = :u"), {"u": u}
                    ).scalar_one())
                    for u in urls
                ]
            yield World(tb, handler, env, db_url, engine, ids)
        finally:
            engine.dispose()


def _post(url: str, form: dict[str, str]) -> None:
    data = urllib.parse.urlencode(form).encode()
    with urllib.request.urlopen(url, data=data, timeout=DEADLINE) as resp:
        assert resp.status == 200, url


def _subscribe(w: World, run: Run, email_addr: str, feed_id: int, **form: str) -> None:
    """The public form on run's web server, then the link of the confirmation mail."""
    before = len(w.sink.received)
    _post(f"{run.url}/subscribe", {"feed": str(feed_id), "email": email_addr, **form})
    w.sink.wait_for(f"the confirmation to {email_addr}", lambda r: len(r) > before)
    found = re.search(r"/confirm/([A-Za-z0-9_\-]+)", w.sink.received[before].text)
    assert found is not None, w.sink.received[before].text
    _post(f"{run.url}/confirm/{found.group(1)}", {})


def test_run_killed_at_every_step_loses_nothing_and_sends_nothing_twice(world: World) -> None:
    w = world
    g0, g1, g2 = w.feed_ids
    backlog = _entries(w)
    assert backlog == 10 * GROWING  # the first crawl stored each feed's ten newest
    run = Run(w.env, w.db)
    # rt@ gets every feed in real time, one@ only the last one, dg@ a daily digest of two
    for fid in (g0, g1, g2):
        _subscribe(w, run, "rt@example.org", fid)
    _subscribe(w, run, "one@example.org", g2)
    for fid in (g0, g1):
        _subscribe(w, run, "dg@example.org", fid, mode="daily", hour="7")
    confirmations = len(w.sink.received)
    assert confirmations == 6
    assert w.scalar("SELECT count(*) FROM notify_subscriptions WHERE status = 'active'") == 6

    # 1. killed while a crawl is on the wire: nothing of it is stored, the feed stays as it was
    w.testbed.clock.advance(PERIOD)  # every growing feed publishes one entry
    before = w.q("SELECT next_crawl_at, crawl_count FROM feeds WHERE id = :i", i=g0)
    gate = w.testbed.hold("growing0.test")
    failed: list[BaseException] = []

    def refresh_g0() -> None:
        try:
            run.refresh(g0)
        except BaseException as exc:  # the process dies under it
            failed.append(exc)

    t = threading.Thread(target=refresh_g0)
    t.start()
    gate.wait_arrived_blocking(1, timeout=DEADLINE)
    run.kill()
    gate.open()
    t.join(DEADLINE)
    assert failed, "the refresh answered although the process was killed mid-fetch"
    assert _entries(w) == backlog
    assert w.q("SELECT next_crawl_at, crawl_count FROM feeds WHERE id = :i", i=g0) == before
    assert len(w.sink.received) == confirmations

    # 2. killed with the first item mail on the wire (the sink has it, its 250 not yet given),
    #    the other rows of that crawl pending
    w.sink.hold_at = confirmations
    run = Run(w.env, w.db)
    for fid in (g0, g1, g2):
        run.refresh(fid)
    assert _entries(w) == backlog + GROWING
    # item rows: rt@ x 3 feeds, one@ x 1; dg@ goes into one digest issue
    assert _item_rows(w) == 4
    w.sink.wait_for("the first item mail", lambda r: len(r) > confirmations)
    run.kill()
    w.sink.release.set()
    in_flight = [w.sink.received[confirmations].message_id]
    assert int(w.scalar("SELECT count(*) FROM notify_outbox WHERE status = 'sent' "
                        "AND kind = 'item'")) == 0

    # 3. restarted: the backlog drains (the message on the wire again, same Message-ID); then
    #    a second round is published and the process is killed with its second mail on the wire
    w.sink.hold_at = None
    w.sink.release.clear()
    run = Run(w.env, w.db)
    _until("the first round delivered", lambda: int(w.scalar(
        "SELECT count(*) FROM notify_outbox WHERE kind = 'item' AND status = 'sent'")) == 4)
    first_round_mails = len(w.sink.received)
    w.sink.hold_at = first_round_mails + 1
    w.testbed.clock.advance(PERIOD)
    for fid in (g0, g1, g2):
        run.refresh(fid)
    assert _entries(w) == backlog + 2 * GROWING
    assert _item_rows(w) == 8
    w.sink.wait_for("the second round's second mail", lambda r: len(r) > first_round_mails + 1)
    run.kill()
    w.sink.release.set()
    in_flight.append(w.sink.received[first_round_mails + 1].message_id)

    # 4. killed right after a crawl committed and before its mails could be sent (the sink
    #    holds the first one): then restarted and left to finish
    w.sink.hold_at = None
    w.sink.release.clear()
    run = Run(w.env, w.db)
    _until("the second round delivered", lambda: int(w.scalar(
        "SELECT count(*) FROM notify_outbox WHERE kind = 'item' AND status = 'sent'")) == 8)
    w.testbed.clock.advance(PERIOD)
    w.sink.hold_at = len(w.sink.received)
    for fid in (g0, g1, g2):
        run.refresh(fid)
    w.sink.wait_for("the third round's first mail", lambda r: len(r) > w.sink.hold_at)  # type: ignore[operator]
    run.kill()
    w.sink.release.set()
    in_flight.append(w.sink.received[-1].message_id)
    w.sink.hold_at = None
    run = Run(w.env, w.db)
    _until("the third round delivered", lambda: int(w.scalar(
        "SELECT count(*) FROM notify_outbox WHERE kind = 'item' AND status = 'sent'")) == 12)
    err = run.stop()
    assert run.proc.returncode == 0, err[-3000:]

    _check_end(w, backlog, confirmations, in_flight)


def _check_end(w: World, backlog: int, confirmations: int, in_flight: list[str]) -> None:
    g0, g1, g2 = w.feed_ids
    rounds = 3
    # stored once: the feed's guids, each once (the unique key would fail the batch otherwise,
    # so this counts that nothing was lost either)
    assert _entries(w) == backlog + rounds * GROWING
    dup = w.q("SELECT feed_id, entry_id, count(*) FROM entries GROUP BY feed_id, entry_id "
              "HAVING count(*) > 1")
    assert dup == []
    new_entries = {
        fid: {r.id: r.title for r in w.q(
            "SELECT id, title FROM entries WHERE feed_id = :f ORDER BY id DESC LIMIT :n",
            f=fid, n=rounds)}
        for fid in w.feed_ids
    }

    # outbox: every item row sent, nothing pending or failed; one row per (subscription, entry)
    status = Counter(
        (r.kind, r.status) for r in w.q("SELECT kind, status FROM notify_outbox")
    )
    assert status[("item", "sent")] == 4 * rounds
    assert status[("confirm", "sent")] == 6
    assert {k for k in status if k[0] != "digest"} == {("item", "sent"), ("confirm", "sent")}

    # the sink: one Message-ID per outbox row, each item mailed to its reader exactly once;
    # the only copies are the messages on the wire at a kill, with their Message-ID
    rows = {
        message_id(r.message_id, Settings().mail_from): r
        for r in w.q(
            "SELECT o.message_id, o.kind, o.entry_id, r.email FROM notify_outbox o "
            "JOIN notify_readers r ON r.id = o.reader_id"
        )
    }
    copies = Counter(m.message_id for m in w.sink.received)
    assert sorted(mid for mid, n in copies.items() if n > 1) == sorted(in_flight)
    assert all(n <= 2 for n in copies.values())
    assert set(copies) <= set(rows), "a mail no outbox row accounts for"
    shown: dict[str, Received] = {}
    for m in w.sink.received:
        assert m.rcpt == (rows[m.message_id].email,), m
        # a copy is the same message (a reader's client shows only the first)
        assert m.text == shown.setdefault(m.message_id, m).text, m
    got = Counter(
        (rows[mid].email, rows[mid].entry_id) for mid in copies if rows[mid].kind == "item"
    )
    want = Counter(
        {("rt@example.org", e): 1 for fid in (g0, g1, g2) for e in new_entries[fid]}
        | {("one@example.org", e): 1 for e in new_entries[g2]}
    )
    assert got == want

    # the digest reader: every new item of her two feeds queued once, in one pending issue
    issues = w.q("SELECT id, status, due_at FROM notify_outbox WHERE kind = 'digest'")
    assert [i.status for i in issues] == ["pending"]
    items = Counter(
        r.entry_id for r in w.q(
            "SELECT entry_id FROM notify_digest_items WHERE outbox_id = :o", o=issues[0].id)
    )
    assert items == Counter({e: 1 for fid in (g0, g1) for e in new_entries[fid]})

    # ... and the issue, once due, is one mail holding each of them once
    store = open_store(w.db)
    try:
        due = issues[0].due_at if isinstance(issues[0].due_at, datetime) else (
            datetime.fromisoformat(str(issues[0].due_at)))
        report = asyncio.run(send_due(
            store, _settings(w),
            now=due.replace(tzinfo=due.tzinfo or UTC) + timedelta(seconds=1),
        ))
    finally:
        store.close()
    assert (report.sent, report.failed, report.retried) == (1, 0, 0), report
    digest = w.sink.received[-1]
    assert digest.rcpt == ("dg@example.org",)
    for fid in (g0, g1):
        for title in new_entries[fid].values():
            assert digest.text.count(title) == 1, (title, digest.text)

    # no feed stuck: each crawled in the last round, healthy, and due again later
    now = datetime.now(UTC)
    for r in w.q("SELECT id, status, error_count, next_crawl_at, last_fetched_at FROM feeds"):
        assert r.error_count == 0, r
        nxt = r.next_crawl_at if isinstance(r.next_crawl_at, datetime) else datetime.fromisoformat(
            str(r.next_crawl_at))
        if nxt.tzinfo is None:
            nxt = nxt.replace(tzinfo=UTC)
        assert now < nxt < now + timedelta(days=1), r
    # and on PostgreSQL no outbox claim outlived its process
    if w.engine.dialect.name == "postgresql":
        assert w.scalar("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'") == 0


_SENDER = """
import asyncio, sys
from datetime import datetime
from fairfetch.config import load_settings
from fairfetch.notify.service import send_due
from fairfetch.store import FeedRecord, SqlStore, open_store
settings = load_settings(db=sys.argv[1])
store = open_store(sys.argv[1])
report = asyncio.run(send_due(store, settings, now=datetime.fromisoformat(sys.argv[2])))
print(report.as_dict())
"""


def _settings(w: World) -> Settings:
    """The settings of the run processes, for a sender in this process."""
    return Settings(smtp_url=w.env["FAIRFETCH_SMTP_URL"],
                    public_url=w.env["FAIRFETCH_PUBLIC_URL"], notify_rate=0)


def _due_digests(w: World) -> list[datetime]:
    out = []
    for r in w.q("SELECT due_at FROM notify_outbox WHERE kind = 'digest' AND status = 'pending' "
                 "ORDER BY due_at"):
        due = r.due_at if isinstance(r.due_at, datetime) else datetime.fromisoformat(str(r.due_at))
        out.append(due.replace(tzinfo=due.tzinfo or UTC))
    return out


def test_digest_sender_killed_with_the_issue_on_the_wire_loses_no_late_item(world: World) -> None:
    """A crawl adds an item while the digest is on the wire, then the sender dies before its
    mark: the copy sent again carries the same Message-ID, so it must be the same message (a
    reader's client shows one of the two); the late item goes to the next issue, as when the
    sender lives."""
    w = world
    g0 = w.feed_ids[0]
    run = Run(w.env, w.db)
    _subscribe(w, run, "dg@example.org", g0, mode="daily", hour="7")
    run.stop()
    confirmations = len(w.sink.received)
    feed_url = w.testbed.url("growing0.test", "/feed.xml")

    w.testbed.clock.advance(PERIOD)
    _cli(w.env, w.db, "feeds", "refresh", feed_url)
    (due,) = _due_digests(w)
    w.sink.hold_at = confirmations
    sender = subprocess.Popen(
        [sys.executable, "-c", _SENDER, w.db, (due + timedelta(seconds=1)).isoformat()],
        env=w.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        w.sink.wait_for("the digest", lambda r: len(r) > confirmations)
        # the issue is on the wire: a crawl finds one more item meanwhile
        w.testbed.clock.advance(PERIOD)
        _cli(w.env, w.db, "feeds", "refresh", feed_url)
    finally:
        sender.send_signal(signal.SIGKILL)
        sender.communicate(timeout=DEADLINE)
        w.sink.release.set()
    w.sink.hold_at = None

    # restarted senders deliver every issue, each when due
    store = open_store(w.db)
    try:
        while (pending := _due_digests(w)):
            report = asyncio.run(send_due(
                store, _settings(w),
                now=pending[0] + timedelta(seconds=1),
            ))
            assert report.sent >= 1, report
    finally:
        store.close()

    mails = w.sink.received[confirmations:]
    first: dict[str, Received] = {}
    for m in mails:
        shown = first.setdefault(m.message_id, m)
        # a copy under the same Message-ID is the same message, or the reader never sees it
        assert m.text == shown.text, (m.message_id, shown.text, m.text)
    titles = [
        r.title for r in w.q(
            "SELECT title FROM entries WHERE feed_id = :f ORDER BY id DESC LIMIT 2", f=g0)
    ]
    for title in titles:
        assert sum(m.text.count(title) for m in first.values()) == 1, (title, list(first))


def _websub_subscription(w: World, feed_id: int, secret: str) -> str:
    """An active WebSub subscription of a feed (as a hub would have verified it); its token."""
    from fairfetch.store import websub_repo
    from fairfetch.websub.state import Event

    now = datetime.now(UTC)
    store = open_store(w.db)
    try:
        sub = websub_repo.create_subscription(
            store, feed_id=feed_id, hub_url=w.testbed.url("hub.growing0.test", "/hub"),
            topic_url=w.testbed.url("growing0.test", "/feed.xml"), secret=secret,
            requested_lease=864000, now=now,
        )
        websub_repo.apply_event(store, sub.id, Event.SUBSCRIBE_REQUESTED, now)
        websub_repo.apply_event(
            store, sub.id, Event.VERIFIED, now, lease_seconds=864000, verified_at=now,
            lease_expires_at=now + timedelta(days=10), next_action_at=now + timedelta(days=5),
        )
    finally:
        store.close()
    return sub.callback_token


def test_run_killed_while_processing_a_websub_ping_processes_it_after_restart(
    world: World,
) -> None:
    """A ping answered 202 is stored durably; the process dies during its re-fetch. The next
    `run` must process it (the item stored and mailed), not leave it claimed by the dead one."""
    import hashlib
    import hmac

    w = world
    g0 = w.feed_ids[0]
    backlog = _entries(w)
    run = Run(w.env, w.db)
    _subscribe(w, run, "rt@example.org", g0)
    token = _websub_subscription(w, g0, "s3cret")

    w.testbed.clock.advance(PERIOD)
    gate = w.testbed.hold("growing0.test")
    body = b"<rss version='2.0'><channel/></rss>"
    sig = hmac.new(b"s3cret", body, hashlib.sha256).hexdigest()
    req = urllib.request.Request(
        f"{run.url}/websub/callback/{token}", data=body, method="POST",
        headers={"Content-Type": "application/rss+xml", "X-Hub-Signature": f"sha256={sig}"},
    )
    with urllib.request.urlopen(req, timeout=DEADLINE) as resp:
        assert resp.status == 202
    gate.wait_arrived_blocking(1, timeout=DEADLINE)  # the re-fetch is on the wire
    run.kill()
    gate.open()
    assert _entries(w) == backlog
    assert [r.status for r in w.q("SELECT status FROM websub_deliveries")] == ["processing"]

    mails = len(w.sink.received)
    run = Run(w.env, w.db)
    _until("the ping processed after the restart", lambda: [
        r.status for r in w.q("SELECT status FROM websub_deliveries")] == ["done"])
    assert _entries(w) == backlog + 1
    w.sink.wait_for("the new item's mail", lambda r: len(r) > mails)
    err = run.stop()
    assert run.proc.returncode == 0, err[-3000:]
    new = w.sink.received[mails:]
    assert [m.rcpt for m in new] == [("rt@example.org",)]


def _waiting_on_a_lock(engine: sa.Engine) -> bool:
    """Some session of the cluster waits for a lock another one holds (PostgreSQL)."""
    with engine.connect() as conn:
        return bool(conn.execute(sa.text(
            "SELECT count(*) FROM pg_locks WHERE NOT granted")).scalar())


def _daily_digest_reader(
    store: SqlStore, now: datetime
) -> tuple[FeedRecord, dict[str, Any], Callable[[sa.Connection, int], int]]:
    """A feed, its one confirmed daily-digest subscription, and how to store its n-th entry."""
    from fairfetch.store import notify_repo
    from fairfetch.store.tables import entries

    feed, _ = store.add_feed("http://growing0.test/feed.xml", now=now,
                             politeness_key="growing0.test")
    sub = notify_repo.subscribe(
        store, "dg@example.org", feed.id, mode="daily", hour=7, weekday=0, tz="UTC",
        only=(), exclude=(), now=now,
    ).subscription
    notify_repo.confirm(store, sub["confirm_token"], now)

    def add_entry(conn: sa.Connection, n: int) -> int:
        at = now + timedelta(seconds=n)
        return int(conn.execute(
            entries.insert().values(feed_id=feed.id, entry_id=f"e{n}", title=f"item {n}",
                                    first_seen_at=at, last_seen_at=at)
            .returning(entries.c.id)
        ).scalar_one())

    return feed, sub, add_entry


def test_digest_issue_rendered_after_closing_holds_what_a_crawl_committing_meanwhile_added(
    pg_url: str,
) -> None:
    """PostgreSQL, two processes: a crawl's transaction read the issue open and added an item,
    and commits while the sender closes and renders the issue. The rendered issue must be the
    issue as stored (else a copy sent again after a crash differs under one Message-ID): the
    close waits for the crawl's transaction, or the crawl sees the issue closed."""
    from fairfetch.store import notify_repo
    from fairfetch.store.notify_outbox import enqueue_new_entries

    now = datetime.now(UTC)
    store = open_store(pg_url)
    try:
        feed, _sub, add_entry = _daily_digest_reader(store, now)

        with store.engine.begin() as conn:
            first = add_entry(conn, 1)
            enqueue_new_entries(conn, feed.id, [first], now, False)
        with store.engine.connect() as conn:
            (issue,) = [int(r) for r in conn.execute(
                sa.text("SELECT id FROM notify_outbox WHERE kind = 'digest'")).scalars()]

        crawl = store.engine.connect()
        tx = crawl.begin()
        late = add_entry(crawl, 2)
        enqueue_new_entries(crawl, feed.id, [late], now, False)  # reads the issue open

        rendered: list[set[int]] = []

        def sender() -> None:
            notify_repo.close_issue(store, issue, now)
            ctx = notify_repo.digest_context(store, issue)
            assert ctx is not None
            rendered.append({i["entry_row"] for i in ctx["items"]})

        t = threading.Thread(target=sender)
        t.start()
        _until("the sender done or waiting for the crawl's transaction",
               lambda: not t.is_alive() or _waiting_on_a_lock(store.engine))
        tx.commit()
        crawl.close()
        t.join(DEADLINE)
        with store.engine.connect() as conn:
            stored = {int(r) for r in conn.execute(sa.text(
                "SELECT entry_id FROM notify_digest_items WHERE outbox_id = :o"), {"o": issue}
            ).scalars()}
            elsewhere = {int(r) for r in conn.execute(sa.text(
                "SELECT entry_id FROM notify_digest_items WHERE outbox_id <> :o"), {"o": issue}
            ).scalars()}
        assert rendered == [stored]
        assert stored | elsewhere == {first, late}
    finally:
        store.close()


def test_digest_sent_while_a_crawl_opens_the_next_issue_is_marked_sent(pg_url: str) -> None:
    """PostgreSQL: the sender's mark moves a late item to the next issue, which a crawl's
    transaction is creating at that moment. The mark must wait and use that issue; it failed
    on the unique key after the server had taken the mail, so the digest stayed pending and
    was sent again."""
    from fairfetch.store import notify_repo
    from fairfetch.store.notify_outbox import enqueue_new_entries
    from fairfetch.store.tables_notify import notify_digest_items

    now = datetime.now(UTC)
    store = open_store(pg_url)
    try:
        feed, sub, add_entry = _daily_digest_reader(store, now)

        with store.engine.begin() as conn:
            enqueue_new_entries(conn, feed.id, [add_entry(conn, 1)], now, False)
        with store.engine.connect() as conn:
            (issue,) = conn.execute(sa.text(
                "SELECT id FROM notify_outbox WHERE kind = 'digest'")).scalars()
            (shown,) = conn.execute(sa.text(
                "SELECT id FROM notify_digest_items WHERE outbox_id = :o"), {"o": issue}
            ).scalars()
        notify_repo.close_issue(store, issue, now)  # rendered with item 1 and on the wire
        with store.engine.begin() as conn:  # an item that slipped in (a late item)
            conn.execute(notify_digest_items.insert().values(
                outbox_id=issue, subscription_id=sub["id"], entry_id=add_entry(conn, 2)))

        crawl = store.engine.connect()
        tx = crawl.begin()
        enqueue_new_entries(crawl, feed.id, [add_entry(crawl, 3)], now, False)  # next issue

        failed: list[BaseException] = []

        def mark() -> None:
            try:
                notify_repo.mark_sent(store, issue, now, subject="digest",
                                      included_items=[shown])
            except BaseException as exc:
                failed.append(exc)

        t = threading.Thread(target=mark)
        t.start()
        _until("the mark done or waiting for the crawl's transaction",
               lambda: not t.is_alive() or _waiting_on_a_lock(store.engine))
        tx.commit()
        crawl.close()
        t.join(DEADLINE)
        assert failed == []
        with store.engine.connect() as conn:
            rows = conn.execute(sa.text(
                "SELECT o.status, count(i.id) FROM notify_outbox o LEFT JOIN notify_digest_items "
                "i ON i.outbox_id = o.id WHERE o.kind = 'digest' GROUP BY o.id, o.status "
                "ORDER BY o.id")).all()
        assert [tuple(r) for r in rows] == [("sent", 1), ("pending", 2)]
    finally:
        store.close()
