"""``itunes:new-feed-url`` is confirmed by fetching the new URL, and that fetch takes the new
host's politeness slot like any other.

It used to be made straight from the old feed's handler, outside the dispatcher: a request to a
host (and key) that was already busy, so a platform that many feeds move onto was hit by one
side request per moving feed, whatever its per-host and per-key caps. Measured here from the
server's side, as the testbed does: the most requests it ever had in flight on the new host.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from fairfetch.config import Settings
from fairfetch.crawl import Crawler, utcnow
from fairfetch.net.politeness import Feedback, politeness_key
from fairfetch.store import SqlStore
from fairfetch.testing import loopback_server


def rss(title: str, extra: str = "") -> bytes:
    return (
        '<?xml version="1.0"?><rss version="2.0" '
        'xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"><channel>'
        f"<title>{title}</title>{extra}<item><guid>{title}-1</guid></item></channel></rss>"
    ).encode()


@dataclass
class Web:
    port: int = 0
    in_flight: dict[str, int] = field(default_factory=dict)
    peak: dict[str, int] = field(default_factory=dict)
    slow_arrived: asyncio.Event = field(default_factory=asyncio.Event)
    release_slow: asyncio.Event = field(default_factory=asyncio.Event)


@asynccontextmanager
async def simulated_web() -> AsyncIterator[Web]:
    state = Web()

    async def handle(request: web.Request) -> web.Response:
        host = request.host.split(":")[0]
        state.in_flight[host] = state.in_flight.get(host, 0) + 1
        state.peak[host] = max(state.peak.get(host, 0), state.in_flight[host])
        try:
            if host == "old.test":
                moved = f"http://new.test:{state.port}/moved"
                return web.Response(
                    body=rss("old", f"<itunes:new-feed-url>{moved}</itunes:new-feed-url>")
                )
            if request.path == "/slow":
                state.slow_arrived.set()
                await state.release_slow.wait()
                return web.Response(body=rss("slow"))
            # /moved: the confirmation. Arriving while /slow is held on this host is the
            # violation; let /slow go then, so the crawl still finishes.
            state.release_slow.set()
            await state.slow_arrived.wait()
            return web.Response(body=rss("moved"))
        finally:
            state.in_flight[host] -= 1

    async with loopback_server(handle) as port:
        state.port = port
        try:
            yield state
        finally:
            state.release_slow.set()


async def test_the_confirming_fetch_waits_for_the_new_hosts_slot(store: SqlStore) -> None:
    async with simulated_web() as sim:
        settings = Settings(
            db=store.url,
            allow_networks=("127.0.0.1/32",),
            resolve=("*.test:127.0.0.1",),
            obey_robots=False,
            per_key_gap=0.0,
        )
        old = f"http://old.test:{sim.port}/feed"
        busy = f"http://new.test:{sim.port}/slow"
        now = utcnow()
        for url in (busy, old):
            store.add_feed(url, now=now, politeness_key=politeness_key(url))
        async with Crawler(store, settings) as crawler:
            dispatcher = crawler._ensure_started()
            put = dispatcher.put

            async def watching_put(url: str, item: Any, *, key: str | None = None) -> None:
                # The confirmation queued for the new host's slot: the busy request may end.
                if url.endswith("/moved"):
                    sim.release_slow.set()
                await put(url, item, key=key)

            dispatcher.put = watching_put  # type: ignore[method-assign]
            summary = await crawler.crawl_due()
        assert summary.due == summary.accounted == 2
        assert summary.counts["ok"] == 2
        assert sim.peak["new.test"] == 1  # one request in flight per host, the side one too
        moved = store.get_feed(old)  # looked up by the URL it had
        assert moved.url == f"http://new.test:{sim.port}/moved"


async def test_a_paused_new_host_is_not_waited_for(store: SqlStore) -> None:
    """The new URL's key is paused by a Retry-After (an hour here): confirming the move waits
    for no one; the feed is crawled, not moved yet, and the pass ends. Waiting would have held
    a one-shot `crawl --once` for the whole pause."""
    async with simulated_web() as sim:
        settings = Settings(
            db=store.url,
            allow_networks=("127.0.0.1/32",),
            resolve=("*.test:127.0.0.1",),
            obey_robots=False,
        )
        old = f"http://old.test:{sim.port}/feed"
        store.add_feed(old, now=utcnow(), politeness_key=politeness_key(old))
        async with Crawler(store, settings) as crawler:
            state = crawler._ensure_started().state
            # new.test answered a 429 with Retry-After: 3600 a moment ago (the dispatcher task
            # has not run yet: this slot never reaches a handler).
            state.push("new.test", "new.test", None)  # type: ignore[arg-type]
            slot = state.pop_ready(0.0)
            assert slot is not None
            state.finish(slot, Feedback(throttled=True, retry_after=3600.0), time.monotonic())
            summary = await asyncio.wait_for(crawler.crawl_due(), 120)  # a hang guard only
        assert summary.due == summary.accounted == 1
        assert summary.counts["ok"] == 1
        assert "new.test" not in sim.peak  # nothing sent to the paused host
        assert store.get_feed(old).url == old  # not moved yet: confirmed on a later crawl
