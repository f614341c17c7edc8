"""The monthly probe of a dead feed obeys a throttle like any other fetch.

A dead feed has no ``next_crawl_at``; it is due when its last fetch is a month old. A throttle
touches no health column, ``last_fetched_at`` included (DESIGN.md's table), so a probe answered
with 429 left the feed exactly as due as before: every pass probed it again at once, whatever
the Retry-After said (and `run`, which starts the next pass straight away while feeds are due,
knocked on the closed door in a loop).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta

from aiohttp import web

from fairfetch.crawl import Crawler, utcnow
from fairfetch.net.politeness import politeness_key
from fairfetch.store import CrawlWrite, SqlStore
from fairfetch.testing import loopback_server

from .conftest import loopback_settings


@asynccontextmanager
async def throttling_server(hits: Counter[str]) -> AsyncIterator[int]:
    async def handle(request: web.Request) -> web.Response:
        hits[request.path] += 1
        if request.path == "/robots.txt":
            return web.Response(status=404)
        return web.Response(status=429, headers={"Retry-After": "3600"})

    async with loopback_server(handle) as port:
        yield port


async def test_a_throttled_dead_probe_waits_for_the_retry_after(store: SqlStore) -> None:
    hits: Counter[str] = Counter()
    async with throttling_server(hits) as port:
        settings = loopback_settings(store.url)
        url = f"http://dead.test:{port}/feed"
        now = utcnow()
        feed, _ = store.add_feed(url, now=now, politeness_key=politeness_key(url))
        long_ago = now - timedelta(days=40)
        store.write(
            [
                CrawlWrite(
                    feed_id=feed.id,
                    url=url,
                    at=long_ago,
                    outcome="error",
                    politeness_key=feed.politeness_key,
                    feed_changes={
                        "status": "dead",
                        "error_count": 10,
                        "last_error": "http: 404",
                        "last_fetched_at": long_ago,
                        "next_crawl_at": None,
                    },
                    error_kind="http",
                )
            ]
        )
        probe = settings.dead_probe_interval
        assert store.count_due(now, dead_probe_interval=probe) == 1  # due for its monthly probe

        async with Crawler(store, settings) as crawler:
            first = await crawler.crawl_due()
        assert first.due == first.accounted == 1
        assert first.counts["throttled"] == 1
        assert hits["/feed"] == 1

        after = store.get_feed(feed.id)
        # The throttle touched no health column...
        assert after.status == "dead"
        assert after.error_count == 10
        assert after.last_fetched_at == long_ago
        # ...and the probe waits for the Retry-After, like any throttled fetch.
        assert after.next_crawl_at is not None
        assert after.next_crawl_at >= now + timedelta(minutes=59)
        later = utcnow() + timedelta(minutes=5)
        assert store.count_due(later, dead_probe_interval=probe) == 0
        assert [f.id for f in store.iter_due(later, dead_probe_interval=probe)] == []
        async with Crawler(store, settings) as crawler:
            second = await crawler.crawl_due()
        assert second.due == 0
        assert hits["/feed"] == 1  # not knocked on again inside the hour

        # Once the Retry-After has passed, the probe is due again.
        hour_on = now + timedelta(hours=1, minutes=1)
        assert store.count_due(hour_on, dead_probe_interval=probe) == 1
