"""Fixtures for the notify integration tests: a store with feeds, entries written the way the
crawler writes them (``SqlStore.write``, which runs the outbox hook), and a real SMTP server on
loopback (aiosmtpd) whose replies a test scripts."""

from __future__ import annotations

import asyncio
import email
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email import policy
from typing import Any

import pytest

import fairfetch.store.notify_repo as repo  # registers the outbox hook (see report)
from fairfetch.config import Settings
from fairfetch.feeds.model import Entry
from fairfetch.notify.options import NotifyOptions
from fairfetch.notify.service import SendReport, send_due
from fairfetch.notify.sink import LoopbackController
from fairfetch.store import CrawlWrite, open_store
from fairfetch.store.sql import SqlStore

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)  # a Monday
FAST = NotifyOptions(rate=0.0)


@dataclass
class Received:
    mail_from: str
    rcpt: str
    data: bytes

    @property
    def msg(self) -> Any:
        return email.message_from_bytes(self.data, policy=policy.default)


class ScriptedHandler:
    """Replies as ``script(n, stage)`` says for the n-th DATA (1-based): ``"250"`` accepts,
    ``"421"``/``"451"``/``"550"`` reply that code at DATA, ``"rcpt:451"``/``"rcpt:550"`` at RCPT,
    ``"drop"`` closes the connection without replying once the message has been transmitted."""

    def __init__(self) -> None:
        self.script: Callable[[int], str] = lambda n: "250"
        self.accepted: list[Received] = []
        self.attempts = 0
        self.lock = threading.Lock()
        self.on_data: Callable[[Received], None] | None = None

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        action = self.script(self.attempts + 1)
        if action.startswith("rcpt:"):
            with self.lock:
                self.attempts += 1
            code = action.split(":", 1)[1]
            return f"{code} {'try later' if code.startswith('4') else 'no such user'}"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        with self.lock:
            self.attempts += 1
            n = self.attempts
        action = self.script(n)
        got = Received(envelope.mail_from, envelope.rcpt_tos[0], envelope.original_content)
        if self.on_data is not None:
            self.on_data(got)
        if action == "drop":
            server.transport.close()
            return "250 never seen by the client"
        if action in ("421", "451", "452"):
            return f"{action} throttled, try again later"
        if action.startswith("5"):
            return f"{action} mailbox unavailable"
        with self.lock:
            self.accepted.append(got)
        return "250 OK"


@dataclass
class SmtpServer:
    handler: ScriptedHandler
    port: int

    @property
    def url(self) -> str:
        return f"smtp://127.0.0.1:{self.port}"

    @property
    def accepted(self) -> list[Received]:
        return self.handler.accepted


@contextmanager
def scripted_smtp_server() -> Iterator[SmtpServer]:
    """A real SMTP server on loopback answering as its handler's script says."""
    handler = ScriptedHandler()
    ctl = LoopbackController(handler, hostname="127.0.0.1", port=0)
    ctl.start()
    try:
        yield SmtpServer(handler, int(ctl.port))
    finally:
        ctl.stop()


@pytest.fixture
def smtp_server() -> Iterator[SmtpServer]:
    with scripted_smtp_server() as server:
        yield server


@dataclass
class World:
    store: SqlStore
    settings: Settings
    counter: int = 0
    feeds: dict[str, int] = field(default_factory=dict)

    def add_feed(self, url: str, *, backlog: int = 2, at: datetime = T0) -> int:
        feed, _ = self.store.add_feed(url, now=at - timedelta(days=1), politeness_key="k")
        self.feeds[url] = feed.id
        self.write(feed.id, [self.entry(f"backlog {i}", published=at - timedelta(days=2))
                             for i in range(backlog)], at=at - timedelta(days=1),
                   first_crawl=True)
        return feed.id

    def entry(self, title: str, *, published: datetime | None = None,
              categories: list[str] | None = None, eid: str | None = None,
              content: str | None = None) -> Entry:
        self.counter += 1
        return Entry(
            id=eid or f"urn:test:{self.counter}",
            title=title,
            link=f"https://site.example.test/{self.counter}",
            published=published,
            categories=list(categories or []),
            content=content or f"<p>{title}</p>",
        )

    def write(self, feed_id: int, entries: list[Entry], *, at: datetime,
              first_crawl: bool = False, settings: Settings | None = None) -> int:
        feed = self.store.get_feed(feed_id)
        [res] = self.store.write([CrawlWrite(
            feed_id=feed_id, url=feed.url, at=at, outcome="ok", politeness_key="k",
            feed_changes={"status": "ok", "last_success_at": at}, entries=entries,
            first_crawl=first_crawl,
        )], settings)
        return res.new_entries

    def subscribe(self, email_addr: str, feed_id: int, *, at: datetime = T0,
                  mode: str = "realtime", hour: int = 8, weekday: int = 0, tz: str = "UTC",
                  only: tuple[str, ...] = (), exclude: tuple[str, ...] = (),
                  confirm: bool = True) -> dict[str, Any]:
        res = repo.subscribe(self.store, email_addr, feed_id, mode=mode, hour=hour,
                             weekday=weekday, tz=tz, only=only, exclude=exclude, now=at)
        sub = res.subscription
        if confirm:
            sub = repo.confirm(self.store, sub["confirm_token"], at)
            # the confirmation mail is not what these tests are about
            for row in repo.due_outbox(self.store, at + timedelta(days=3650), 10_000):
                if row["kind"] == "confirm":
                    repo.cancel(self.store, row["id"], "test: confirmed directly")
        return sub

    def outbox(self) -> list[dict[str, Any]]:
        return sorted(repo.list_outbox(self.store, limit=100_000), key=lambda r: r["id"])


def _world(url: str, smtp_url: str = "smtp://127.0.0.1:9") -> World:
    store = open_store(url)
    settings = Settings(
        db=url,
        smtp_url=smtp_url,
        public_url="https://news.example.test",
        mail_from="fairfetch <mail@news.example.test>",
    )
    return World(store, settings)


@pytest.fixture
def world(tmp_path) -> Iterator[World]:
    w = _world(f"sqlite:///{tmp_path}/notify.db")
    yield w
    w.store.close()


@pytest.fixture
def any_world(db_url) -> Iterator[World]:
    """The same world on SQLite and on PostgreSQL."""
    w = _world(db_url)
    yield w
    w.store.close()


@pytest.fixture
def mail_world(tmp_path, smtp_server) -> Iterator[World]:
    w = _world(f"sqlite:///{tmp_path}/notify.db", smtp_server.url)
    yield w
    w.store.close()


async def race_two_senders(
    w: World, a_server: SmtpServer, b_server: SmtpServer, now: datetime
) -> tuple[SendReport, SendReport]:
    """Sender A's pass, with sender B's whole pass (to ``b_server``) run while A's first
    message is on the wire: B reads the rows A read and works while A holds one in flight.
    Deterministic, no sleeps."""
    settings_a = w.settings.replace(smtp_url=a_server.url)
    settings_b = w.settings.replace(smtp_url=b_server.url)
    b_report: list[SendReport] = []
    b_failed: list[BaseException] = []

    def run_b() -> None:
        try:
            b_report.append(asyncio.run(send_due(w.store, settings_b, now, options=FAST)))
        except BaseException as exc:  # surfaced by the assertions below
            b_failed.append(exc)

    def while_a_in_flight(_got: Any) -> None:
        if not a_server.handler.accepted and not b_report and not b_failed:
            t = threading.Thread(target=run_b)
            t.start()
            t.join(timeout=120)

    a_server.handler.on_data = while_a_in_flight
    a = await send_due(w.store, settings_a, now, options=FAST)
    assert b_failed == []
    assert len(b_report) == 1
    return a, b_report[0]
