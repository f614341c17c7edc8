"""The discovery GET of a topic is a request to the publisher like any crawl: robots.txt is
honoured (obey_robots), and a politeness key the publisher paused (Retry-After) is not knocked
on — neither when a feed is first subscribed nor at a renewal that checks for a moved hub.
A real publisher on loopback counts what reaches it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from aiohttp import web

from fairfetch.store import websub_repo as repo
from fairfetch.store.politeness_repo import save_key_pauses

from .conftest import Subscriber, TestHub, loopback_settings, running_subscriber

WAIT = 30.0  # a safety net against hangs, never a synchronisation device

ATOM = """<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>p</title>
<id>tag:p.test,2026:f</id><updated>2026-11-01T00:00:00Z</updated>
<link rel="hub" href="{hub}"/><link rel="self" href="{self}"/></feed>"""


@dataclass
class Publisher:
    base: str = ""
    hits: list[str] = field(default_factory=list)
    robots: str = "User-agent: *\nAllow: /\n"
    hub: str = ""
    #: answer the feed with 429 and this Retry-After
    throttle: str | None = None


@pytest.fixture
async def publisher(test_hub: TestHub) -> AsyncIterator[Publisher]:
    pub = Publisher(hub=test_hub.url("/hub"))

    async def robots(_request: web.Request) -> web.Response:
        return web.Response(text=pub.robots)

    async def feed(request: web.Request) -> web.Response:
        pub.hits.append(request.path)
        if pub.throttle is not None:
            return web.Response(status=429, headers={"Retry-After": pub.throttle})
        return web.Response(body=ATOM.format(hub=pub.hub, self=pub.base + "/feed").encode(),
                            content_type="text/xml")

    app = web.Application()
    app.router.add_get("/robots.txt", robots)
    app.router.add_get("/feed", feed)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    pub.base = f"http://127.0.0.1:{runner.addresses[0][1]}"
    try:
        yield pub
    finally:
        await runner.cleanup()


@pytest.fixture
async def obeying(tmp_path: Path) -> AsyncIterator[Subscriber]:
    settings = loopback_settings(tmp_path).replace(obey_robots=True)
    async with running_subscriber(settings) as sub:
        yield sub


def _advertising(s: Subscriber, publisher: Publisher, query: str = "",
                 key: str = "127.0.0.1") -> int:
    """The publisher's feed, stored as a crawl made while it was allowed left it: advertising
    the hub (so the upkeep offers it to its hub). ``key``: its politeness key, when it must
    differ from the hub's (both listen on 127.0.0.1)."""
    from fairfetch.store.tables import feeds

    feed, _ = s.store.add_feed(publisher.base + "/feed" + query, now=datetime.now(UTC),
                               politeness_key=key)
    with s.store.engine.begin() as conn:
        conn.execute(feeds.update().where(feeds.c.id == feed.id).values(
            hub_urls=[publisher.hub], self_url=publisher.base + "/feed", status="ok"))
    return feed.id


async def test_websub_discovery_honours_robots_txt(
    obeying: Subscriber, publisher: Publisher, test_hub: TestHub
) -> None:
    s = obeying
    publisher.robots = "User-agent: *\nDisallow: /feed\n"
    feed_id = _advertising(s, publisher)
    counts = await s.service.tick()
    assert publisher.hits == []  # robots.txt says no: not fetched for discovery either
    assert counts["subscribed"] == 0
    assert test_hub.requests == []
    outcome = await s.service.subscribe_feed(feed_id)
    assert publisher.hits == []
    assert outcome.subscription is None
    assert "robots" in outcome.detail
    # allowed again: discovered and subscribed as usual
    publisher.robots = "User-agent: *\nAllow: /\n"
    s.crawler.fetcher.robots.invalidate()
    outcome = await s.service.subscribe_feed(feed_id)
    assert publisher.hits == ["/feed"]
    assert outcome.subscription is not None


async def test_websub_discovery_waits_for_a_paused_politeness_key(
    obeying: Subscriber, publisher: Publisher, test_hub: TestHub
) -> None:
    """The publisher said Retry-After: an hour (stored for every process). The upkeep does not
    GET its feed to discover the hub meanwhile, and offers it again once the pause is over —
    not a week later, as for a feed found to advertise no hub."""
    s = obeying
    feed_id = _advertising(s, publisher)
    t0 = datetime.now(UTC)
    save_key_pauses(s.store, {"127.0.0.1": t0 + timedelta(hours=1)}, t0)
    counts = await s.service.tick()
    assert publisher.hits == []
    assert counts["subscribed"] == 0
    assert test_hub.requests == []
    later = t0 + timedelta(hours=1, minutes=1)
    s.service.clock = lambda: later
    counts = await s.service.tick()
    assert publisher.hits == ["/feed"]
    assert counts["subscribed"] == 1
    sub = repo.latest_for_feed(s.store, feed_id)
    assert sub is not None
    assert sub.hub_url == test_hub.url("/hub")


async def test_websub_renewal_checks_a_moved_hub_only_once_the_key_reopens(
    obeying: Subscriber, publisher: Publisher, test_hub: TestHub
) -> None:
    s = obeying
    feed_id = _advertising(s, publisher, key="pub.test")  # the hub's key stays open
    assert (await s.service.subscribe_feed(feed_id)).subscription is not None
    assert (await asyncio.wait_for(test_hub.verifications.get(), WAIT)).status == 200
    assert publisher.hits == ["/feed"]
    from fairfetch.store.tables import feeds

    with s.store.engine.begin() as conn:  # a crawl saw the feed name another hub
        conn.execute(feeds.update().where(feeds.c.id == feed_id).values(
            hub_urls=[test_hub.url("/hub-307")]))
    sub = repo.latest_for_feed(s.store, feed_id)
    assert sub is not None
    t0 = datetime.now(UTC)
    save_key_pauses(s.store, {"pub.test": t0 + timedelta(hours=1)}, t0)
    repo.update_subscription(s.store, sub.id, t0, next_action_at=t0)
    counts = await s.service.tick()
    assert publisher.hits == ["/feed"]  # no discovery GET on the paused key
    assert counts["renewed"] == 1  # the renewal itself goes to the hub, as before
    assert (await asyncio.wait_for(test_hub.verifications.get(), WAIT)).mode == "subscribe"
    assert [r.form["hub.mode"] for r in test_hub.requests] == ["subscribe", "subscribe"]


async def test_websub_discovery_answered_429_pauses_the_key_for_the_other_feeds(
    obeying: Subscriber, publisher: Publisher, test_hub: TestHub
) -> None:
    """One platform, three feeds advertising its hub, and it answers the first discovery GET
    with 429 + Retry-After: an hour. The other two are not fetched in that pass (each would
    have been one more 429, and each feed set aside for a week as "advertises no hub"), and
    all three are offered again once the hour is over."""
    s = obeying
    ids = [_advertising(s, publisher, f"?n={n}") for n in range(3)]
    publisher.throttle = "3600"
    counts = await s.service.tick()
    assert len(publisher.hits) == 1
    assert counts["subscribed"] == 0
    assert all(s.store.get_feed(i).status == "ok" for i in ids)  # no health column touched
    publisher.throttle = None
    later = datetime.now(UTC) + timedelta(hours=1, minutes=1)
    s.service.clock = lambda: later
    counts = await s.service.tick()
    assert len(publisher.hits) == 4
    assert counts["subscribed"] == 3
