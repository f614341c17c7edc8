"""Fixtures for WebSub integration tests: our callback app on loopback, and a test hub of our own
that rebuilds the websub.rocks subscriber cases (topics, redirects, hub 307/308, signatures)."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pytest
import uvicorn
from aiohttp import ClientSession, web
from fastapi import FastAPI

from fairfetch.config import Settings
from fairfetch.crawl.loop import Crawler
from fairfetch.net.fetch import Fetcher
from fairfetch.store import SqlStore, open_store, websub_repo
from fairfetch.testbed.youtube import YouTubeWorld, world_of
from fairfetch.testing import Testbed, running_testbed
from fairfetch.websub.hub_client import callback_url
from fairfetch.websub.routes import router
from fairfetch.websub.service import WebSubService
from fairfetch.websub.signature import sign


def loopback_socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    return sock


@contextlib.asynccontextmanager
async def serve_callback(service: WebSubService) -> AsyncIterator[str]:
    """Serve a minimal FastAPI app with just the WebSub router; yields its base URL.

    The socket is bound and listening before the server task starts, so no waiting is needed:
    early connections queue in the backlog.
    """
    app = FastAPI()
    app.include_router(router)
    app.state.websub = service
    sock = loopback_socket()
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    service.settings = service.settings.replace(public_url=base)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        yield base
    finally:
        server.should_exit = True
        await task
        sock.close()


@dataclass
class Verification:
    mode: str
    status: int
    body: str
    challenge: str
    params: dict[str, str]


@dataclass
class HubRecord:
    form: dict[str, str]
    path: str


@dataclass
class TestHub:
    """A hub and publisher in one aiohttp app on 127.0.0.1 (``/hub``; topics under ``/t/``)."""

    __test__ = False
    base: str = ""
    topics: dict[str, Callable[[web.Request], web.StreamResponse]] = field(default_factory=dict)
    requests: list[HubRecord] = field(default_factory=list)
    verifications: asyncio.Queue[Verification] = field(default_factory=asyncio.Queue)
    subscribers: dict[str, dict[str, str]] = field(default_factory=dict)  # callback -> form
    #: When set, the hub verifies with this topic instead of the one asked for (websub.rocks 205).
    verify_topic_override: str | None = None
    lease_granted: int | None = None
    deny_reason: str | None = None
    _session: ClientSession | None = None
    _tasks: set[asyncio.Task[Any]] = field(default_factory=set)

    def url(self, path: str) -> str:
        return self.base + path

    async def hub(self, request: web.Request) -> web.StreamResponse:
        form = {k: str(v) for k, v in (await request.post()).items()}
        self.requests.append(HubRecord(form, request.path))
        if request.path == "/hub-307":
            raise web.HTTPTemporaryRedirect("/hub")
        if request.path == "/hub-308":
            raise web.HTTPPermanentRedirect("/hub")
        if request.path == "/hub-down":
            return web.Response(status=500, text="hub is down")
        if form.get("hub.mode") not in ("subscribe", "unsubscribe") or not form.get(
            "hub.callback"
        ):
            return web.Response(status=400, text="bad request")
        task = asyncio.get_running_loop().create_task(self._verify(form))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return web.Response(status=202, text="accepted")

    async def _verify(self, form: dict[str, str]) -> None:
        assert self._session is not None
        callback = form["hub.callback"]
        if self.deny_reason is not None:
            params = {"hub.mode": "denied", "hub.topic": form["hub.topic"],
                      "hub.reason": self.deny_reason}
            async with self._session.get(callback, params=params) as resp:
                body = await resp.text()
                await self.verifications.put(Verification("denied", resp.status, body, "", params))
            return
        challenge = "chal-" + str(len(self.requests)) + "-\u00e9x"
        params = {
            "hub.mode": form["hub.mode"],
            "hub.topic": self.verify_topic_override or form["hub.topic"],
            "hub.challenge": challenge,
        }
        if form["hub.mode"] == "subscribe":
            params["hub.lease_seconds"] = str(
                self.lease_granted or int(form.get("hub.lease_seconds", "86400"))
            )
        async with self._session.get(callback, params=params) as resp:
            body = await resp.text()
            ok = resp.status == 200 and body == challenge
            if ok and form["hub.mode"] == "subscribe":
                self.subscribers[callback] = form
            elif ok:
                self.subscribers.pop(callback, None)
            await self.verifications.put(
                Verification(form["hub.mode"], resp.status, body, challenge, params)
            )

    async def deliver(
        self, callback: str, body: bytes, *, secret: str | None = None, algo: str = "sha256",
        signature: str | None = None, content_type: str = "application/atom+xml",
    ) -> tuple[int, str]:
        """POST a content distribution; ``secret`` signs it, ``signature`` overrides the header."""
        assert self._session is not None
        headers = {"Content-Type": content_type}
        if signature is not None:
            headers["X-Hub-Signature"] = signature
        elif secret is not None:
            headers["X-Hub-Signature"] = sign(secret, body, algo)
        async with self._session.post(callback, data=body, headers=headers) as resp:
            return resp.status, await resp.text()

    async def topic(self, request: web.Request) -> web.StreamResponse:
        handler = self.topics.get(request.path)
        if handler is None:
            return web.Response(status=404)
        return handler(request)


@pytest.fixture
async def test_hub() -> AsyncIterator[TestHub]:
    async with running_test_hub() as hub:
        yield hub


@contextlib.asynccontextmanager
async def running_test_hub() -> AsyncIterator[TestHub]:
    """A :class:`TestHub` on its own loopback port (the fixture's, or a second hub)."""
    hub = TestHub()
    app = web.Application()
    app.router.add_post("/hub", hub.hub)
    app.router.add_post("/hub-307", hub.hub)
    app.router.add_post("/hub-308", hub.hub)
    app.router.add_post("/hub-down", hub.hub)
    app.router.add_get("/{tail:t/.*}", hub.topic)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    hub.base = f"http://127.0.0.1:{port}"
    hub._session = ClientSession()
    try:
        yield hub
    finally:
        for task in list(hub._tasks):
            with contextlib.suppress(Exception):
                await task
        await hub._session.close()
        await runner.cleanup()


def subscribed_feed(store: SqlStore, now: datetime, topic: str = "http://pub.test/f") -> Any:
    """A feed at ``topic`` and a subscription to it at http://hub.test/ (secret ``k`` * 40,
    a day's lease requested): (feed, subscription record)."""
    feed, _ = store.add_feed(topic, now=now, politeness_key="pub.test")
    sub = websub_repo.create_subscription(
        store, feed_id=feed.id, hub_url="http://hub.test/", topic_url=topic, secret="k" * 40,
        requested_lease=86400, now=now,
    )  # fmt: skip
    return feed, sub


def loopback_settings(tmp_path: Any, **overrides: Any) -> Settings:
    return Settings(
        db=f"sqlite:///{tmp_path}/fairfetch.db",
        allow_networks=("127.0.0.1/32",),
        obey_robots=False,
        **overrides,
    )


@dataclass
class Subscriber:
    store: SqlStore
    settings: Settings
    service: WebSubService
    crawler: Crawler
    base: str


@pytest.fixture
async def subscriber(tmp_path: Any) -> AsyncIterator[Subscriber]:
    async with running_subscriber(loopback_settings(tmp_path)) as sub:
        yield sub


@contextlib.asynccontextmanager
async def running_subscriber(settings: Settings) -> AsyncIterator[Subscriber]:
    """A store, a crawler and the WebSub service sharing one fetcher, the callback served."""
    store = open_store(settings.db)
    fetcher = Fetcher(settings)
    crawler = Crawler(store, settings, fetcher=fetcher)
    service = WebSubService(store, settings, crawler=crawler, fetcher=fetcher)
    try:
        async with serve_callback(service) as base:
            crawler.settings = service.settings
            yield Subscriber(store, service.settings, service, crawler, base)
    finally:
        await service.aclose()
        await crawler.aclose()
        await fetcher.aclose()
        store.close()


def now() -> datetime:
    return datetime.now(UTC)


@dataclass
class YouTubeSubscriber:
    """A subscriber on the testbed's YouTube-like platform and hub, on the testbed's clock."""

    testbed: Testbed
    world: YouTubeWorld
    store: SqlStore
    service: WebSubService
    crawler: Crawler


@contextlib.asynccontextmanager
async def youtube_subscriber(tmp_path: Any) -> AsyncIterator[YouTubeSubscriber]:
    async with running_testbed() as tb:
        world = world_of(tb)
        settings = tb.settings(db=f"sqlite:///{tmp_path}/ff.db")
        store = open_store(settings.db)
        fetcher = Fetcher(settings)
        crawler = Crawler(store, settings, fetcher=fetcher, clock=tb.clock.now_datetime)
        service = WebSubService(store, settings, crawler=crawler, fetcher=fetcher,
                                clock=tb.clock.now_datetime)
        try:
            async with serve_callback(service):
                yield YouTubeSubscriber(tb, world, store, service, crawler)
        finally:
            await world.aclose()
            await service.aclose()
            await crawler.aclose()
            await fetcher.aclose()
            store.close()


@dataclass
class Callback:
    store: SqlStore
    service: WebSubService
    base: str
    sub: websub_repo.SubscriptionRecord
    session: ClientSession

    @property
    def url(self) -> str:
        return callback_url(self.base, self.sub.callback_token)


@pytest.fixture
async def callback(db_url: str, tmp_path: Any) -> AsyncIterator[Callback]:
    """Our callback app served on loopback over ``db_url``, with one subscription (see
    ``subscribed_feed``) and a client session; the service's clock stands at noon, 30 Nov."""
    t0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
    settings = loopback_settings(tmp_path).replace(db=db_url)
    store = open_store(db_url)
    _, sub = subscribed_feed(store, t0)
    service = WebSubService(store, settings, clock=lambda: t0)
    try:
        async with serve_callback(service) as base, ClientSession() as session:
            yield Callback(store, service, base, sub, session)
    finally:
        await service.aclose()
        store.close()
