"""`fairfetch run` SIGKILLed with a WebSub push received and not yet stored, then restarted.

The kill point the other chaos tests miss: the hub's POST has been read by the callback, the
process is re-fetching the feed the ping names (a YouTube-style ping names one video, and is
answered only once the video is stored), and nothing of it is in the database yet. The process
dies, so the hub's request ends without an answer. A hub retries such a delivery; after the
restart the retried ping must be processed: the video stored once and mailed once to the
real-time reader, nothing lost, nothing sent twice.

Real processes and parts: the testbed (its YouTube-like platform and hub, in a thread of this
process), an aiosmtpd sink, `fairfetch run` as a subprocess on SQLite and PostgreSQL. The kill
point is reached by holding the re-fetch at the testbed (a gate), never by timing. The second
test kills a fat ping (the feed's body, stored then processed) before its delivery row is
committed, with a table lock as the gate (PostgreSQL only).
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import sqlalchemy as sa

from fairfetch.notify.sink import LoopbackController
from fairfetch.store import open_store, websub_repo
from fairfetch.store.notify_subscriptions import confirm, subscribe
from fairfetch.testbed.youtube import FEED_HOST, RETRY_BASE, HubSubscription, world_of
from fairfetch.testing import Testbed, testbed_thread
from fairfetch.websub.hub_client import callback_url
from fairfetch.websub.state import Event

SECRET = "kill-me-softly"
#: generous bound for one observable event; reaching it is a failure, never a timing assertion
DEADLINE = 60.0


@dataclass
class Sink:
    """Every message the SMTP server accepted: (recipients, subject)."""

    received: list[tuple[tuple[str, ...], str]] = field(default_factory=list)
    cond: threading.Condition = field(default_factory=threading.Condition)

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        subject = ""
        for line in envelope.original_content.decode("utf-8", "replace").splitlines():
            if line.lower().startswith("subject:"):
                subject = line.split(":", 1)[1].strip()
                break
        with self.cond:
            self.received.append((tuple(envelope.rcpt_tos), subject))
            self.cond.notify_all()
        return "250 OK"

    def wait_for(self, what: str, pred: Callable[[], bool]) -> None:
        with self.cond:
            if not self.cond.wait_for(pred, timeout=DEADLINE):
                raise AssertionError(f"the sink never saw {what}: {self.received}")


@pytest.fixture
def sink() -> Iterator[tuple[Sink, int]]:
    handler = Sink()
    controller = LoopbackController(handler, hostname="127.0.0.1", port=0)
    controller.start()
    try:
        yield handler, int(controller.port)
    finally:
        controller.stop()


class Run:
    """One `fairfetch run` subprocess on an ephemeral port."""

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


def _in_testbed(tb: Testbed, fn: Callable[[], Any]) -> Any:
    """Run ``fn`` (sync or a coroutine function) in the testbed's loop; the hub's state lives
    there and its deliveries are that loop's requests."""
    loop = tb._loop
    assert loop is not None

    async def call() -> Any:
        result = fn()
        return await result if asyncio.iscoroutine(result) else result

    return asyncio.run_coroutine_threadsafe(call(), loop)


def _subscriptions(
    db: str, feed_id: int, hub_url: str, topic: str, reader: str
) -> str:
    """A confirmed real-time reader of the feed, and an active WebSub subscription of it (as
    the hub verified it); returns the subscription's callback token."""
    now = datetime.now(UTC)
    store = open_store(db)
    try:
        sub = subscribe(store, reader, feed_id, mode="realtime", hour=7, weekday=0, tz="UTC",
                        only=(), exclude=(), now=now).subscription
        confirm(store, sub["confirm_token"], now)
        ws = websub_repo.create_subscription(
            store, feed_id=feed_id, hub_url=hub_url, topic_url=topic, secret=SECRET,
            requested_lease=432000, now=now,
        )
        websub_repo.apply_event(store, ws.id, Event.SUBSCRIBE_REQUESTED, now)
        websub_repo.apply_event(
            store, ws.id, Event.VERIFIED, now, lease_seconds=432000, verified_at=now,
            lease_expires_at=now + timedelta(days=5), next_action_at=now + timedelta(days=4),
        )
    finally:
        store.close()
    return ws.callback_token


def test_run_killed_with_a_push_read_and_not_stored_gets_it_again_from_the_hub(
    db_url: str, sink: tuple[Sink, int]
) -> None:
    mails, smtp_port = sink
    reader = "rt@example.org"
    with testbed_thread(
        11, blogs=0, letterbox=0, letterbox_custom=0, podcasts=0, growing=0, edge_copies=0,
    ) as tb:
        world = world_of(tb)
        channel = world.channel_ids()[0]
        topic = world.feed_url(channel)
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("FAIRFETCH_")},
            **tb.env(),
            "FAIRFETCH_SMTP_URL": f"smtp://127.0.0.1:{smtp_port}",
            "FAIRFETCH_PUBLIC_URL": "http://127.0.0.1:9",
            "FAIRFETCH_NOTIFY_POLL": "0.05",
            "FAIRFETCH_NOTIFY_RATE": "0",
            "FAIRFETCH_OBEY_ROBOTS": "false",
            "NO_COLOR": "1",
            "COLUMNS": "300",
        }
        if "FAIRFETCH_TEST_PG" in os.environ:
            env["FAIRFETCH_TEST_PG"] = os.environ["FAIRFETCH_TEST_PG"]
        _cli(env, db_url, "feeds", "add", topic)
        engine = sa.create_engine(db_url)
        try:
            def scalar(sql: str, **params: Any) -> Any:
                with engine.connect() as conn:
                    return conn.execute(sa.text(sql), params).scalar()

            feed_id = int(scalar("SELECT id FROM feeds WHERE url = :u", u=topic))
            backlog = int(scalar("SELECT count(*) FROM entries WHERE feed_id = :f", f=feed_id))
            assert backlog > 0
            token = _subscriptions(db_url, feed_id, world.hub_url(), topic, reader)
            run = Run(env, db_url)
            _until("the confirmation settled", lambda: scalar(
                "SELECT count(*) FROM notify_outbox WHERE status = 'pending'") == 0)
            before = len(mails.received)

            # the hub knows the callback as the run serves it; the video's ping is read by the
            # callback, which re-fetches the feed: held at the testbed, and the process killed
            def hub_subscribes(base: str) -> Callable[[], None]:
                def do() -> None:
                    world.subscriptions.clear()
                    cb = callback_url(base, token)
                    world.subscriptions[(topic, cb)] = HubSubscription(
                        topic, cb, SECRET, world.now() + 5 * 86400)
                    for p in world.pending:  # the same public callback, behind a new port
                        p.callback = cb
                return do

            _in_testbed(tb, hub_subscribes(run.url)).result(DEADLINE)
            gate = tb.hold(FEED_HOST)
            pinged = _in_testbed(tb, lambda: world.publish_and_ping(channel))
            gate.wait_arrived_blocking(1, timeout=DEADLINE)  # the ping's re-fetch is on the wire
            run.kill()
            gate.open()
            video, statuses = pinged.result(DEADLINE)
            assert statuses == [None], "the hub got an answer from a process killed before it"
            assert scalar("SELECT count(*) FROM entries WHERE feed_id = :f AND entry_id = :e",
                          f=feed_id, e=video.entry_id) == 0
            assert [(p.video, p.attempts) for p in world.pending] == [(video.id, 1)]

            # restarted: the hub retries when its time comes, the ping is processed
            run = Run(env, db_url)
            _in_testbed(tb, hub_subscribes(run.url)).result(DEADLINE)
            tb.clock.advance(RETRY_BASE)
            assert _in_testbed(tb, world.retry_due).result(DEADLINE) == [200]
            assert world.pending == []
            item_mails = lambda: mails.received[before:]  # noqa: E731
            mails.wait_for("the video's mail", lambda: len(item_mails()) >= 1)
            _until("the outbox drained", lambda: scalar(
                "SELECT count(*) FROM notify_outbox WHERE status = 'pending'") == 0)
            err = run.stop()
            assert run.proc.returncode == 0, err[-3000:]

            assert scalar("SELECT count(*) FROM entries WHERE feed_id = :f AND entry_id = :e",
                          f=feed_id, e=video.entry_id) == 1
            assert scalar("SELECT count(*) FROM entries WHERE feed_id = :f",
                          f=feed_id) == backlog + 1
            with engine.connect() as conn:
                outbox = sorted(tuple(r) for r in conn.execute(sa.text(
                    "SELECT kind, status FROM notify_outbox")))
            assert outbox == [("confirm", "cancelled"), ("item", "sent")]
            (only,) = item_mails()
            assert only[0] == (reader,)
            assert video.title in only[1], mails.received
            assert [(d.attempt, d.status) for d in world.log] == [(1, None), (2, 200)]
        finally:
            engine.dispose()


def test_run_killed_before_a_fat_ping_is_stored_stores_the_hubs_retry_once(
    pg_url: str, sink: tuple[Sink, int]
) -> None:
    """A fat ping (signed feed body) read by the callback, killed before its delivery row is
    committed (PostgreSQL: the deliveries table locked by this test, the kill once the insert
    waits on it). Nothing of it may be stored; the hub's retry to the restarted process is
    stored once and processed: the new item stored once and mailed once."""
    mails, smtp_port = sink
    reader = "rt@example.org"
    with testbed_thread(
        12, blogs=0, letterbox=0, letterbox_custom=0, podcasts=0, growing=1,
        growing_period=600.0, edge_copies=0,
    ) as tb:
        topic = tb.url("growing0.test", "/feed.xml")
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("FAIRFETCH_")},
            **tb.env(),
            "FAIRFETCH_SMTP_URL": f"smtp://127.0.0.1:{smtp_port}",
            "FAIRFETCH_PUBLIC_URL": "http://127.0.0.1:9",
            "FAIRFETCH_NOTIFY_POLL": "0.05",
            "FAIRFETCH_NOTIFY_RATE": "0",
            "FAIRFETCH_OBEY_ROBOTS": "false",
            "NO_COLOR": "1",
            "COLUMNS": "300",
        }
        _cli(env, pg_url, "feeds", "add", topic)
        engine = sa.create_engine(pg_url)
        try:
            def scalar(sql: str, **params: Any) -> Any:
                with engine.connect() as conn:
                    return conn.execute(sa.text(sql), params).scalar()

            feed_id = int(scalar("SELECT id FROM feeds WHERE url = :u", u=topic))
            backlog = int(scalar("SELECT count(*) FROM entries"))
            token = _subscriptions(pg_url, feed_id, tb.url("hub.growing0.test", "/hub"), topic,
                                   reader)
            run = Run(env, pg_url)
            _until("the confirmation settled", lambda: scalar(
                "SELECT count(*) FROM notify_outbox WHERE status = 'pending'") == 0)
            before = len(mails.received)

            tb.clock.advance(600.0)  # the feed publishes one entry; its hub pings us
            body = b"<rss version='2.0'><channel><title>fat</title></channel></rss>"
            signature = "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()

            def push(base: str) -> int:
                req = urllib.request.Request(
                    callback_url(base, token), data=body, method="POST",
                    headers={"Content-Type": "application/rss+xml",
                             "X-Hub-Signature": signature})
                with urllib.request.urlopen(req, timeout=DEADLINE) as resp:
                    return int(resp.status)

            locker = engine.connect()
            locker.execute(sa.text("LOCK TABLE websub_deliveries IN EXCLUSIVE MODE"))
            answers: list[int | BaseException] = []

            def hub_push() -> None:
                try:
                    answers.append(push(run.url))
                except BaseException as exc:  # the process dies under it
                    answers.append(exc)

            pusher = threading.Thread(target=hub_push)
            pusher.start()
            try:
                _until("the delivery's insert waiting on the locked table", lambda: bool(scalar(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                    "AND wait_event_type = 'Lock'")))
                run.kill()
            finally:
                locker.rollback()
                locker.close()
                pusher.join(DEADLINE)
            assert len(answers) == 1
            assert isinstance(answers[0], BaseException), "answered by a killed process"
            assert scalar("SELECT count(*) FROM websub_deliveries") == 0
            assert scalar("SELECT count(*) FROM entries") == backlog

            # the hub retries to the restarted process
            run = Run(env, pg_url)
            assert push(run.url) == 202
            _until("the retried ping processed", lambda: scalar(
                "SELECT count(*) FROM websub_deliveries WHERE status <> 'done'") == 0)
            mails.wait_for("the new item's mail", lambda: len(mails.received) > before)
            _until("the outbox drained", lambda: scalar(
                "SELECT count(*) FROM notify_outbox WHERE status = 'pending'") == 0)
            err = run.stop()
            assert run.proc.returncode == 0, err[-3000:]

            assert scalar("SELECT count(*) FROM websub_deliveries") == 1
            assert scalar("SELECT count(*) FROM entries") == backlog + 1
            assert scalar("SELECT count(*) FROM notify_outbox WHERE kind = 'item' "
                          "AND status = 'sent'") == 1
            assert [m[0] for m in mails.received[before:]] == [(reader,)]
        finally:
            engine.dispose()
