"""A hub granting a lease shorter than a minute (hub.lease_seconds=1): we renew at half a minute
(lease.MIN_LEASE), and that renewal must find the subscription still ours — not lapsed, with
its feed made due for a poll at once, every half minute, for as long as the hub keeps granting
1 s. Our test hub on loopback verifies each request; the service's clock is moved by hand."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from aiohttp import web

from fairfetch.store import websub_repo as repo

from .conftest import Subscriber, TestHub

WAIT = 30.0  # a safety net against hangs, never a synchronisation device

ATOM = """<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>p</title>
<id>tag:p.test,2026:f</id><updated>2026-11-01T00:00:00Z</updated>
<link rel="hub" href="{hub}"/><link rel="self" href="{self}"/></feed>"""


async def test_websub_lease_shorter_than_a_minute_is_renewed_without_lapsing(
    subscriber: Subscriber, test_hub: TestHub
) -> None:
    topic = test_hub.url("/t/short")
    body = ATOM.format(hub=test_hub.url("/hub"), self=topic).encode()
    test_hub.topics["/t/short"] = lambda _r: web.Response(body=body, content_type="text/xml")
    test_hub.lease_granted = 1
    assert (await subscriber.crawler.add([topic])).added == [topic]
    feed = subscriber.store.get_feed(topic)
    polled_at = feed.next_crawl_at
    assert polled_at is not None
    # the wall clock, moved on by hand to each renewal (it keeps running: a verification that
    # races the hub's 202 is told apart by its later time, as in production)
    ahead = [timedelta(0)]
    subscriber.service.clock = lambda: datetime.now(UTC) + ahead[0]

    await subscriber.service.tick()
    for cycle in range(3):
        v = await asyncio.wait_for(test_hub.verifications.get(), WAIT)
        assert (v.mode, v.status, v.params["hub.lease_seconds"]) == ("subscribe", 200, "1")
        sub = repo.latest_for_feed(subscriber.store, feed.id)
        assert sub is not None
        assert (sub.state, sub.lease_seconds) == ("active", 1)
        assert sub.next_action_at is not None
        assert sub.lease_expires_at is not None
        assert sub.next_action_at < sub.lease_expires_at  # renewed while it still runs
        ahead[0] += sub.next_action_at - subscriber.service.clock() + timedelta(seconds=0.001)
        counts = await subscriber.service.tick()
        assert (counts["lapsed"], counts["renewed"]) == (0, 1), cycle
        # the feed keeps its schedule: no poll forced every half minute
        assert subscriber.store.get_feed(feed.id).next_crawl_at == polled_at
    await asyncio.wait_for(test_hub.verifications.get(), WAIT)
