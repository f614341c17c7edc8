"""The upkeep pass (run_forever's body): subscribe feeds that advertise hubs, renew at half the
lease, let a lapsed lease fall back to polling, unsubscribe removed feeds — on the testbed's
YouTube-like hub, with the testbed clock (no sleeping)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from fairfetch.crawl.loop import Crawler
from fairfetch.store import SqlStore
from fairfetch.store import websub_repo as repo
from fairfetch.testbed.youtube import HUB_LEASE, YouTubeWorld
from fairfetch.testing import Testbed
from fairfetch.websub import lease
from fairfetch.websub.service import WebSubService, run_forever

from .conftest import youtube_subscriber

WAIT = 30.0


@dataclass
class Env:
    testbed: Testbed
    world: YouTubeWorld
    store: SqlStore
    service: WebSubService
    crawler: Crawler
    feeds: list[int]


@pytest.fixture
async def env(tmp_path: Path) -> AsyncIterator[Env]:
    async with youtube_subscriber(tmp_path) as yt:
        world, store, crawler = yt.world, yt.store, yt.crawler
        urls = [world.feed_url(c) for c in world.channel_ids()[:2]]
        report = await crawler.add(urls)
        assert len(report.added) == 2, report
        feeds = [store.get_feed(u).id for u in urls]
        yield Env(yt.testbed, world, store, yt.service, crawler, feeds)


def states(env: Env) -> list[str]:
    out = []
    for fid in env.feeds:
        sub = repo.latest_for_feed(env.store, fid)
        out.append(sub.state if sub else "none")
    return out


async def test_websub_upkeep_subscribes_renews_lapses_unsubscribes(env: Env) -> None:
    counts = await env.service.tick()
    assert counts["subscribed"] == 2
    await asyncio.wait_for(env.world.wait_verifications(2), WAIT)
    assert states(env) == ["active", "active"]
    assert len(env.world.subscriptions) == 2

    # nothing due: no duplicate subscriptions, no early renewals
    counts = await env.service.tick()
    assert (counts["subscribed"], counts["renewed"]) == (0, 0)

    # half the lease (plus the jitter) later: both renewed, the hub verifies again
    first = repo.latest_for_feed(env.store, env.feeds[0])
    assert first is not None
    assert first.verified_at is not None
    env.testbed.clock.advance(HUB_LEASE / 2 * (1 + lease.JITTER) + 1)
    counts = await env.service.tick()
    assert counts["renewed"] == 2
    await asyncio.wait_for(env.world.wait_verifications(4), WAIT)
    again = repo.latest_for_feed(env.store, env.feeds[0])
    assert again is not None
    assert again.verified_at is not None
    assert again.verified_at > first.verified_at
    assert again.id == first.id  # a renewal, not a new subscription
    assert states(env) == ["active", "active"]

    # the hub goes down: renewals fail, the lease runs out, polling resumes at once
    env.world.accepting = False
    env.testbed.clock.advance(HUB_LEASE / 2 * (1 + lease.JITTER) + 1)
    await env.service.tick()
    assert states(env) == ["active", "active"]     # a failed renewal: the lease still runs
    env.testbed.clock.advance(HUB_LEASE)
    counts = await env.service.tick()
    assert counts["lapsed"] == 2
    assert states(env) == ["expired", "expired"]
    now = env.testbed.clock.now_datetime()
    for fid in env.feeds:
        due = env.store.get_feed(fid).next_crawl_at
        assert due is not None
        assert due <= now

    # the hub is back: the expired subscriptions are requested again and verified
    env.world.accepting = True
    env.testbed.clock.advance(lease.retry_delay(30) + 7 * 3600)
    await env.service.tick()
    await asyncio.wait_for(env.world.wait_verifications(6), WAIT)
    assert states(env) == ["active", "active"]

    # a feed removed: we unsubscribe from its hub
    removed = env.feeds[1]
    env.store.delete_feed(removed)
    counts = await env.service.tick()
    assert counts["unsubscribed"] == 1
    await asyncio.wait_for(env.world.wait_verifications(7), WAIT)
    assert env.world.verifications[-1][0] == "unsubscribe"
    assert len(env.world.subscriptions) == 1
    gone = [s for s in repo.list_subscriptions(env.store) if s.feed_id is None]
    assert [s.state for s in gone] == ["unsubscribed"]


async def test_websub_run_forever_stops(env: Env) -> None:
    stop = asyncio.Event()
    task = asyncio.create_task(run_forever(env.store, env.service.settings, stop,
                                           service=env.service))
    await asyncio.wait_for(env.world.wait_verifications(2), WAIT)
    stop.set()
    await asyncio.wait_for(task, WAIT)
    assert states(env) == ["active", "active"]


async def test_websub_upkeep_does_not_rediscover_hubless_feed_every_pass(env: Env) -> None:
    """A feed whose stored hub list is stale (the document no longer advertises one) costs one
    discovery GET, not one per upkeep pass."""
    from fairfetch.store.tables import feeds as feeds_table

    # pretend a third feed advertised a hub when crawled; its document does not
    report = await env.crawler.add([env.testbed.url("blog1.test", "/feed.xml")])
    url = (report.added or report.existing)[0]
    fid = env.store.get_feed(url).id
    with env.store.engine.begin() as conn:
        conn.execute(feeds_table.update().where(feeds_table.c.id == fid).values(
            hub_urls=["http://127.0.0.2:9/hub"]))
    env.testbed.reset_stats()
    await env.service.tick()
    await env.service.tick()
    stats = await env.testbed.stats()
    assert stats["hosts"]["blog1.test"]["requests"] == 1
    assert repo.latest_for_feed(env.store, fid) is None
