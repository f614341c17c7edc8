"""The soak's world: feeds on a loopback server whose answers a test scripts per simulated day,
a real SMTP server on loopback that counts what it accepts, and an oracle of what happened
(which item the crawler was first shown when), kept apart from the store it checks."""

from __future__ import annotations

import asyncio
import email
import hashlib
import re
import threading
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email import policy
from email.utils import format_datetime
from typing import Any

from aiohttp import web

from fairfetch.notify.sink import LoopbackController
from fairfetch.testing import loopback_server

T0 = datetime(2026, 3, 2, 0, 0, tzinfo=UTC)  # a Monday
TOKEN = re.compile(r"ITEM-[a-z]+-\d+")
CONFIRM = re.compile(r"/confirm/([A-Za-z0-9_\-]+)")


@dataclass
class Item:
    token: str
    guid: str
    title: str
    published: datetime
    categories: tuple[str, ...]


@dataclass
class SimFeed:
    """One feed on the scripted server. ``mode`` is what it answers now: ``ok``, ``429``,
    ``503`` (with Retry-After), ``500``, ``timeout``, ``410``; ``moved`` answers its old path
    with a 301 to ``/new.xml`` and serves the feed there."""

    name: str
    items: list[Item] = field(default_factory=list)
    window: int = 5
    mode: str = "ok"
    requests: int = 0
    requests_after_gone: int = 0
    counter: int = 0
    hidden: set[str] = field(default_factory=set)
    answers: Counter[str] = field(default_factory=Counter)

    def publish(self, at: datetime, categories: tuple[str, ...] = ()) -> Item:
        self.counter += 1
        token = f"ITEM-{self.name}-{self.counter}"
        item = Item(token, f"urn:{self.name}:{self.counter}", token, at, categories)
        self.items.append(item)
        return item

    def republish(self, item: Item) -> Item:
        """The same item again under a new id (same title and date): not news."""
        again = Item(item.token, item.guid + ":again", item.title, item.published,
                     item.categories)
        self.items.append(again)
        return again

    def shown(self) -> list[Item]:
        return [it for it in self.items if it.token not in self.hidden][-self.window :]

    def body(self, port: int) -> bytes:
        parts = [
            '<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel>',
            f"<title>Feed {self.name}</title><link>http://{self.name}.test:{port}/</link>",
        ]
        for it in reversed(self.shown()):
            cats = "".join(f"<category>{c}</category>" for c in it.categories)
            parts.append(
                f'<item><guid isPermaLink="false">{it.guid}</guid><title>{it.title}</title>'
                f"<link>http://{self.name}.test:{port}/p/{it.guid[-6:]}</link>"
                f"<pubDate>{format_datetime(it.published, usegmt=True)}</pubDate>{cats}"
                "<description>words of the day</description></item>"
            )
        parts.append("</channel></rss>")
        return "".join(parts).encode()


class Web:
    """The scripted server's state and its oracle: ``first_served`` is when the crawler was
    first handed each item in a 200 (the crawl writes at that same simulated instant)."""

    def __init__(self) -> None:
        self.feeds: dict[str, SimFeed] = {}
        self.now = T0
        self.port = 0
        self.first_served: dict[str, datetime] = {}
        self.served_in_first_read: set[str] = set()
        self.reads: dict[str, int] = {}
        self.closing = asyncio.Event()
        self.served_guids: set[str] = set()

    def url(self, name: str, path: str = "/feed.xml") -> str:
        return f"http://{name}.test:{self.port}{path}"

    async def handle(self, request: web.Request) -> web.StreamResponse:
        if request.path == "/robots.txt":
            return web.Response(status=404)
        name = (request.host or "").split(".", 1)[0]
        feed = self.feeds.get(name)
        if feed is None:
            return web.Response(status=404)
        feed.requests += 1
        feed.answers[feed.mode] += 1
        if feed.mode == "410":
            feed.requests_after_gone += 1
            return web.Response(status=410)
        if feed.mode == "429":
            return web.Response(status=429, headers={"Retry-After": "7200"})
        if feed.mode == "503":
            until = format_datetime(self.now + timedelta(hours=3), usegmt=True)
            return web.Response(status=503, headers={"Retry-After": until})
        if feed.mode == "500":
            return web.Response(status=500, text="down")
        if feed.mode == "timeout":
            await self.closing.wait()  # never answers while the test runs
            return web.Response(status=503)
        if feed.mode == "moved" and request.path != "/new.xml":
            return web.Response(status=301, headers={"Location": "/new.xml"})
        body = feed.body(self.port)
        etag = '"' + hashlib.sha256(body).hexdigest()[:16] + '"'
        if request.headers.get("If-None-Match") == etag:
            return web.Response(status=304, headers={"ETag": etag})
        first_read = name not in self.reads
        self.reads[name] = self.reads.get(name, 0) + 1
        for it in feed.shown():
            self.served_guids.add(it.guid)
            if it.token not in self.first_served:
                self.first_served[it.token] = self.now
                if first_read:
                    self.served_in_first_read.add(it.token)
        return web.Response(body=body, content_type="application/rss+xml",
                            headers={"ETag": etag})


@asynccontextmanager
async def scripted_web() -> AsyncIterator[Web]:
    w = Web()
    async with loopback_server(w.handle) as port:
        w.port = port
        try:
            yield w
        finally:
            w.closing.set()  # a hanging answer would hold the server's shutdown a minute


@dataclass
class Mail:
    rcpt: str
    subject: str
    text: str
    message_id: str
    at: datetime  # the simulated time it was accepted

    @property
    def kind(self) -> str:
        if CONFIRM.search(self.text):
            return "confirm"
        if self.subject.startswith(("Daily digest", "Weekly digest")):
            return "digest"
        return "item"

    @property
    def tokens(self) -> list[str]:
        return TOKEN.findall(self.text)


class CountingHandler:
    """Accepts every mail and keeps it, unless ``refusing`` (a server that answers 421)."""

    def __init__(self) -> None:
        self.refusing = False
        self.now = T0
        self.mails: list[Mail] = []
        self.refused = 0
        self.lock = threading.Lock()

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        if self.refusing:
            with self.lock:
                self.refused += 1
            return "421 4.3.2 service not available, try again later"
        msg = email.message_from_bytes(envelope.original_content, policy=policy.default)
        body = msg.get_body(preferencelist=("plain",))
        text = body.get_content() if body is not None else ""
        mail = Mail(envelope.rcpt_tos[0], str(msg["Subject"]), text, str(msg["Message-ID"]),
                    self.now)
        with self.lock:
            self.mails.append(mail)
        return "250 OK"


@contextmanager
def counting_smtp() -> Iterator[tuple[CountingHandler, str]]:
    handler = CountingHandler()
    ctl = LoopbackController(handler, hostname="127.0.0.1", port=0)
    ctl.start()
    try:
        yield handler, f"smtp://127.0.0.1:{ctl.port}"
    finally:
        ctl.stop()
