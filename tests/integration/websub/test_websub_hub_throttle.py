"""A hub that throttles our subscription requests (429 + Retry-After: an hour). Its Retry-After
binds every request to that hub, as a publisher's binds every request to its feeds: the rest of
the upkeep pass does not POST there, and the subscriptions are asked again once the hour is
over — not a minute or two later, one by one, each answered 429 again.
Publisher and hub are real aiohttp apps on loopback under two names (two politeness keys)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from aiohttp import web

from fairfetch.store import websub_repo as repo

from .conftest import Subscriber, loopback_settings, running_subscriber

ATOM = """<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>p</title>
<id>tag:p.test,2026:{n}</id><updated>2026-11-01T00:00:00Z</updated>
<link rel="hub" href="{hub}"/><link rel="self" href="{self}"/></feed>"""


@dataclass
class World:
    port: int = 0
    posts: list[dict[str, str]] = field(default_factory=list)
    throttle: bool = True

    def url(self, host: str, path: str) -> str:
        return f"http://{host}:{self.port}{path}"


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[tuple[World, Subscriber]]:
    w = World()

    async def topic(request: web.Request) -> web.Response:
        n = request.match_info["n"]
        body = ATOM.format(n=n, hub=w.url("hub.test", "/hub"), self=w.url("pub.test", f"/f/{n}"))
        return web.Response(body=body.encode(), content_type="text/xml")

    async def hub(request: web.Request) -> web.Response:
        w.posts.append({k: str(v) for k, v in (await request.post()).items()})
        if w.throttle:
            return web.Response(status=429, headers={"Retry-After": "3600"})
        return web.Response(status=202)

    app = web.Application()
    app.router.add_get("/f/{n}", topic)
    app.router.add_post("/hub", hub)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    w.port = runner.addresses[0][1]
    settings = loopback_settings(tmp_path, resolve=("*.test:127.0.0.1",))
    try:
        async with running_subscriber(settings) as sub:
            yield w, sub
    finally:
        await runner.cleanup()


async def test_websub_hub_retry_after_binds_every_request_to_that_hub(
    world: tuple[World, Subscriber],
) -> None:
    w, s = world
    t0 = datetime.now(UTC)
    for n in range(3):
        report = await s.crawler.add([w.url("pub.test", f"/f/{n}")])
        assert len(report.added) == 1, report
    counts = await s.service.tick()
    assert len(w.posts) == 1  # the first was told to wait an hour: the others were not sent
    subs = repo.list_subscriptions(s.store)
    assert len(subs) == 3
    for sub in subs:
        assert sub.next_action_at is not None
        assert sub.next_action_at >= t0 + timedelta(minutes=59), sub
        assert sub.last_error is not None
        assert "429" in sub.last_error or "Retry-After" in sub.last_error, sub.last_error
    assert counts["subscribed"] == 3

    # within the hour nothing is sent; after it, each subscription is asked once
    soon = t0 + timedelta(minutes=30)
    s.service.clock = lambda: soon
    await s.service.tick()
    assert len(w.posts) == 1
    w.throttle = False
    later = t0 + timedelta(hours=1, minutes=1)
    s.service.clock = lambda: later
    await s.service.tick()
    assert len(w.posts) == 4
    assert sorted(p["hub.topic"] for p in w.posts[1:]) == [
        w.url("pub.test", f"/f/{n}") for n in range(3)]
