"""Point 6 of issue 5 end to end, on the testbed's YouTube-like platform and hub.

Each branch in both directions: what must be ignored is ignored *and* what must be processed is
processed (the FeedMail outage was the filter written the wrong way round), the retry branch
answers non-2xx and is later satisfied, and the give-up branch bounds the retries.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa

from fairfetch.config import Settings
from fairfetch.crawl.loop import Crawler
from fairfetch.store import SqlStore
from fairfetch.store import websub_repo as repo
from fairfetch.store.tables import crawls, entries
from fairfetch.testbed.youtube import (
    DAY,
    HUB_LEASE,
    MAX_ATTEMPTS,
    PendingPing,
    YouTubeWorld,
)
from fairfetch.testing import Testbed
from fairfetch.websub.service import WebSubService
from fairfetch.websub.status import websub_stats, websub_summary

from .conftest import youtube_subscriber

WAIT = 30.0
HOUR = 3600.0


@dataclass
class YT:
    testbed: Testbed
    world: YouTubeWorld
    store: SqlStore
    settings: Settings
    service: WebSubService
    crawler: Crawler
    channel: str
    feed_id: int
    sub_id: int

    def entry_ids(self) -> set[str]:
        with self.store.engine.connect() as conn:
            return set(conn.execute(sa.select(entries.c.entry_id).where(
                entries.c.feed_id == self.feed_id)).scalars())

    def ping_crawls(self) -> int:
        with self.store.engine.connect() as conn:
            return int(conn.execute(sa.select(sa.func.count()).where(
                crawls.c.feed_id == self.feed_id, crawls.c.trigger == "ping")).scalar_one())

    def outcomes(self) -> dict[str, int]:
        return repo.ping_counts(self.store, self.testbed.clock.now_datetime() - timedelta(days=30))


@pytest.fixture
async def yt(tmp_path: Path) -> AsyncIterator[YT]:
    async with youtube_subscriber(tmp_path) as env:
        world, store, service = env.world, env.store, env.service
        channel = world.channel_ids()[0]
        report = await env.crawler.add([world.feed_url(channel)])
        assert report.added, report
        feed = store.get_feed(world.feed_url(channel))
        assert feed.kind == "video"
        outcome = await service.subscribe_feed(feed.id)
        assert outcome.subscription is not None, outcome.detail
        await asyncio.wait_for(world.wait_verifications(1), WAIT)
        sub = repo.get_subscription(store, outcome.subscription.id)
        assert sub is not None
        assert sub.state == "active"
        yield YT(env.testbed, world, store, service.settings, service, env.crawler, channel,
                 feed.id, sub.id)


async def test_websub_youtube_subscription_and_summary(yt: YT) -> None:
    summary = websub_summary(yt.store, yt.feed_id)
    assert summary is not None
    assert summary["state"] == "active"
    assert summary["hub"] == yt.world.hub_url()
    assert summary["topic"] == yt.world.feed_url(yt.channel)
    assert summary["lease_seconds"] == HUB_LEASE  # the hub's lease, not the one we asked for
    assert summary["lease_expires_at"] == summary["verified_at"] + timedelta(seconds=HUB_LEASE)
    assert websub_summary(yt.store, yt.feed_id + 999) is None


# --- found: a new video in the feed -> 2xx and stored ------------------------------------------

async def test_websub_youtube_new_video_ping_to_stored_entry(yt: YT) -> None:
    video, statuses = await yt.world.publish_and_ping(yt.channel, appear_after=0.0)
    assert statuses == [200]
    assert video.entry_id in yt.entry_ids()   # stored before the hub got its answer
    assert yt.ping_crawls() == 1
    assert yt.outcomes() == {"accepted": 1}
    assert yt.world.pending == []


# --- retry: ping before the entry exists -> non-2xx; hub retries; then stored -------------------

async def test_websub_youtube_ping_before_entry_is_retried_then_stored(yt: YT) -> None:
    video, statuses = await yt.world.publish_and_ping(yt.channel, appear_after=HOUR)
    assert statuses == [503]
    assert video.entry_id not in yt.entry_ids()
    assert len(yt.world.pending) == 1
    yt.testbed.clock.advance(HOUR)
    assert await yt.world.retry_due() == [200]
    assert video.entry_id in yt.entry_ids()
    assert yt.world.pending == []
    assert yt.outcomes() == {"retried": 1, "accepted": 1}


# --- ignored: years-old videos edited -> 2xx, no re-fetch; recent edits are processed ----------

async def test_websub_youtube_years_old_edit_ignored_without_refetch(yt: YT) -> None:
    old = yt.world.old_video(yt.channel)
    assert yt.testbed.clock.now() - old.published > 3 * 365 * DAY
    assert await yt.world.edit(old) == [200]
    assert yt.ping_crawls() == 0              # not even re-fetched
    assert old.entry_id not in yt.entry_ids()
    assert yt.world.pending == []             # and the hub stops
    assert yt.outcomes() == {"ignored": 1}


async def test_websub_youtube_recent_edit_is_processed(yt: YT) -> None:
    """The other direction: 13 days old is NOT too old — this is what the outage dropped."""
    video = yt.world.publish(yt.channel, published_ago=13 * DAY, appear_after=0.0)
    assert video.entry_id not in yt.entry_ids()
    assert await yt.world.edit(video) == [200]
    assert yt.ping_crawls() == 1
    assert video.entry_id in yt.entry_ids()
    assert yt.outcomes() == {"accepted": 1}


async def test_websub_youtube_ignore_threshold_is_configurable(yt: YT) -> None:
    video = yt.world.publish(yt.channel, published_ago=3 * DAY, appear_after=0.0)
    yt.service.settings = yt.settings.replace(websub_ignore_older_than=2 * DAY)
    assert await yt.world.edit(video) == [200]
    assert yt.ping_crawls() == 0
    yt.service.settings = yt.settings.replace(websub_ignore_older_than=4 * DAY)
    assert await yt.world.edit(video) == [200]
    assert yt.ping_crawls() == 1
    assert video.entry_id in yt.entry_ids()


# --- give up: missing and last updated > 4 h ago -> 2xx; recent -> non-2xx ----------------------

async def test_websub_youtube_missing_stale_video_gives_up(yt: YT) -> None:
    video = yt.world.publish(yt.channel, published_ago=DAY, updated_ago=5 * HOUR,
                             appear_after=None)
    assert await yt.world.ping(video) == [200]
    assert yt.world.pending == []
    assert yt.ping_crawls() == 1   # it was looked for
    assert video.entry_id not in yt.entry_ids()


async def test_websub_youtube_missing_recent_video_retried_until_bound(yt: YT) -> None:
    video = yt.world.publish(yt.channel, published_ago=DAY, updated_ago=HOUR, appear_after=None)
    assert await yt.world.ping(video) == [503]
    assert len(yt.world.pending) == 1
    yt.testbed.clock.advance(2 * HOUR)       # updated 3 h ago: still retried
    assert await yt.world.retry_due() == [503]
    yt.testbed.clock.advance(1.5 * HOUR)     # updated 4.5 h ago: give up, answer 2xx
    assert await yt.world.retry_due() == [200]
    assert yt.world.pending == []
    assert yt.outcomes() == {"retried": 2, "accepted": 1}


# --- the rest --------------------------------------------------------------------------------

async def test_websub_youtube_deleted_video_acknowledged(yt: YT) -> None:
    video, _ = await yt.world.publish_and_ping(yt.channel, appear_after=0.0)
    assert await yt.world.delete(video) == [200]
    assert yt.outcomes() == {"accepted": 1, "ignored": 1}


async def test_websub_youtube_duplicate_pings_and_poll_one_entry(yt: YT) -> None:
    video, first = await yt.world.publish_and_ping(yt.channel, appear_after=0.0)
    second = await yt.world.ping(video)
    assert first == second == [200]
    await yt.crawler.refresh([yt.feed_id])
    with yt.store.engine.connect() as conn:
        n = conn.execute(sa.select(sa.func.count()).where(
            entries.c.feed_id == yt.feed_id, entries.c.entry_id == video.entry_id)).scalar_one()
    assert n == 1


async def test_websub_youtube_stats_buckets(yt: YT) -> None:
    await yt.world.publish_and_ping(yt.channel, appear_after=0.0)                 # accepted
    await yt.world.publish_and_ping(yt.channel, appear_after=HOUR)                # retried
    await yt.world.edit(yt.world.old_video(yt.channel))                           # ignored
    sub = repo.get_subscription(yt.store, yt.sub_id)
    assert sub is not None
    # a forged delivery (wrong secret) is acknowledged but rejected
    topic = yt.world.feed_url(yt.channel)
    callback = yt.world.subscribers(topic)[0].callback
    forged = PendingPing(topic, callback, "forged-secret", b"<x/>", "x", MAX_ATTEMPTS, 0.0)
    assert await yt.world._deliver(forged, "forged") == 202
    stats = websub_stats(yt.store, yt.testbed.clock.now_datetime() - timedelta(days=1))
    assert stats["received"] == 4
    buckets = (stats["accepted"], stats["retried"], stats["ignored"], stats["rejected"])
    assert buckets == (1, 1, 1, 1)
    assert stats["rejected_by_reason"] == {"invalid": 1}
    assert stats["subscriptions"] == {"active": 1}


async def test_websub_youtube_refetch_is_bounded_never_held_open(yt: YT) -> None:
    """A publisher that does not answer: the callback gives up on its re-fetch and answers
    non-2xx (the hub retries) instead of holding the hub's connection open."""
    yt.service.refetch_timeout = 0.2
    video = yt.world.publish(yt.channel, appear_after=0.0)
    async with yt.testbed.hold("www.youtube.test") as gate:
        assert await yt.world.ping(video) == [503]
        assert video.entry_id not in yt.entry_ids()
        await gate.wait_arrived(1)
    yt.service.refetch_timeout = 30.0
    yt.testbed.clock.advance(3600)
    assert await yt.world.retry_due() == [200]
    assert video.entry_id in yt.entry_ids()


async def test_websub_youtube_http_control(yt: YT) -> None:
    import aiohttp

    # straight to the loopback port, naming the virtual host in the Host header
    base = f"http://127.0.0.1:{yt.testbed.base_port}/_control/"
    host = {"Host": "www.youtube.test"}
    async with aiohttp.ClientSession(headers=host) as session:
        async with session.post(base + "publish", params={"channel": yt.channel}) as resp:
            data = await resp.json()
        assert data["statuses"] == [200]
        assert data["entry_id"] in yt.entry_ids()
        async with session.post(base + "edit-old", params={"channel": yt.channel}) as resp:
            assert (await resp.json())["statuses"] == [200]
        async with session.get(base + "state") as resp:
            state = await resp.json()
    assert state["subscriptions"] == 1
    assert [d["kind"] for d in state["deliveries"]] == ["new", "edit"]
