"""`fairfetch notify send-due` SIGKILLed after the SMTP server accepted a paid mail and before
the outbox row is marked sent, then run again.

The kill point the other notify kill tests reach only by chance (their kills are random or hold
the message before the server's 250): the server has taken the mail, the row still says
pending. Documented outcome (notify/service.py): that one message is sent again with the same
Message-ID and the same text, and nothing else moves: the publisher who pays for the feed is
charged once, the row ends sent, no third copy.

The gate is a row lock, not a timer: while the sink holds the message's DATA, this test locks
the outbox row (PostgreSQL, SELECT … FOR UPDATE); the 250 goes out, the sender's mark waits on
the lock, and the process is killed once PostgreSQL shows it waiting.
"""

from __future__ import annotations

import email
import email.policy
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from typing import Any

import pytest
import sqlalchemy as sa

from fairfetch.feeds.model import Entry
from fairfetch.notify.sink import LoopbackController
from fairfetch.store import CrawlWrite, notify_repo, open_store

#: generous bound for one observable event; reaching it is a failure, never a timing assertion
DEADLINE = 60.0
READER = "paid@example.org"


@dataclass
class LockingSink:
    """Keeps every message; on the first one, has ``lock`` take the row lock before the 250."""

    lock: Callable[[], None]
    received: list[tuple[str, str]] = field(default_factory=list)  # (Message-ID, text)

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        msg = email.message_from_bytes(envelope.original_content, policy=email.policy.default)
        assert isinstance(msg, EmailMessage)
        body = msg.get_body(("plain",))
        if not self.received:
            self.lock()
        self.received.append((str(msg["Message-ID"]), body.get_content() if body else ""))
        return "250 OK"


def _until(what: str, pred: Callable[[], bool]) -> None:
    """Wait for a condition in the database (there is no event to wait on across processes)."""
    end = time.monotonic() + DEADLINE
    while not pred():
        if time.monotonic() > end:
            raise AssertionError(f"never happened: {what}")
        time.sleep(0.02)


@pytest.fixture
def row_lock(pg_url: str) -> Iterator[tuple[sa.Engine, Callable[[], None], Callable[[], None]]]:
    """(engine, lock the item row, release it): the lock is held on its own connection."""
    engine = sa.create_engine(pg_url)
    held: list[sa.Connection] = []
    guard = threading.Lock()

    def lock() -> None:
        conn = engine.connect()
        conn.execute(sa.text("SELECT id FROM notify_outbox WHERE kind = 'item' FOR UPDATE"))
        with guard:
            held.append(conn)

    def release() -> None:
        with guard:
            while held:
                conn = held.pop()
                conn.rollback()
                conn.close()

    try:
        yield engine, lock, release
    finally:
        release()
        engine.dispose()


def _send_due(env: dict[str, str], db: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "fairfetch", "--db", db, "notify", "send-due"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def test_sender_killed_between_the_servers_250_and_the_mark_resends_once_and_charges_once(
    pg_url: str, row_lock: tuple[sa.Engine, Callable[[], None], Callable[[], None]]
) -> None:
    engine, lock, release = row_lock
    now = datetime.now(UTC) - timedelta(minutes=5)
    store = open_store(pg_url)
    try:
        feed, _ = store.add_feed("http://paid.test/feed.xml", now=now - timedelta(days=1),
                                 politeness_key="paid.test")

        def write(title: str, at: datetime, first: bool) -> None:
            store.write([CrawlWrite(
                feed_id=feed.id, url=feed.url, at=at, outcome="ok", politeness_key="paid.test",
                feed_changes={"status": "ok", "last_success_at": at},
                entries=[Entry(id=f"urn:paid:{title}", title=title,
                               link=f"http://paid.test/{title}", content=f"<p>{title}</p>")],
                first_crawl=first,
            )], None)

        write("backlog", now - timedelta(days=1), True)
        publisher = notify_repo.grant(store, "Paid Press", 5, now, feed_ids=[feed.id])["id"]
        sub = notify_repo.subscribe(store, READER, feed.id, mode="realtime", hour=8, weekday=0,
                                    tz="UTC", only=(), exclude=(), now=now).subscription
        notify_repo.confirm(store, sub["confirm_token"], now)
        for row in notify_repo.due_outbox(store, now + timedelta(days=1), 100):
            if row["kind"] == "confirm":
                notify_repo.cancel(store, row["id"], "test: confirmed directly")
        write("Scoop of the day", now + timedelta(minutes=1), False)
    finally:
        store.close()

    sink = LockingSink(lock)
    controller = LoopbackController(sink, hostname="127.0.0.1", port=0)
    controller.start()
    try:
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("FAIRFETCH_")},
            "FAIRFETCH_SMTP_URL": f"smtp://127.0.0.1:{controller.port}",
            "FAIRFETCH_PUBLIC_URL": "http://127.0.0.1:9",
            "FAIRFETCH_NOTIFY_RATE": "0",
            "NO_COLOR": "1",
        }

        def mark_waits() -> bool:
            with engine.connect() as conn:
                return bool(conn.execute(sa.text(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                    "AND wait_event_type = 'Lock'")).scalar())

        first = _send_due(env, pg_url)
        try:
            _until("the sender's mark waiting on the locked row", mark_waits)
        finally:
            first.send_signal(signal.SIGKILL)
            first.communicate(timeout=DEADLINE)
            release()
        assert first.returncode == -signal.SIGKILL
        assert len(sink.received) == 1  # the server took it
        with engine.connect() as conn:
            assert conn.execute(sa.text(
                "SELECT status FROM notify_outbox WHERE kind = 'item'")).scalar() == "pending"

        again = _send_due(env, pg_url)
        out, err = again.communicate(timeout=DEADLINE)
        assert again.returncode == 0, (out, err)
    finally:
        controller.stop()

    # the one message on the wire at the kill, once more, the same message
    assert len(sink.received) == 2, sink.received
    (mid, text), (mid2, text2) = sink.received
    assert mid2 == mid
    assert text2 == text
    assert "Scoop of the day" in text
    with engine.connect() as conn:
        rows = [tuple(r) for r in conn.execute(sa.text(
            "SELECT kind, status FROM notify_outbox ORDER BY id"))]
    assert rows == [("confirm", "cancelled"), ("item", "sent")]
    # ... and paid for once
    store = open_store(pg_url)
    try:
        charges = [r["amount"] for r in notify_repo.ledger(store)
                   if r["kind"] == "charge" and r["publisher_id"] == publisher]
        balances = {b["name"]: b["balance"] for b in notify_repo.balances(store)}
    finally:
        store.close()
    assert charges == [-1]
    assert balances == {"Paid Press": 4}
