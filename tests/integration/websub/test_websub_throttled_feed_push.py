"""A push for a feed whose publisher throttled us (429 + Retry-After: its politeness key is
paused for an hour): the re-fetch waits for the key, and nothing else may wait with it.

Real HTTP on loopback (the publisher an aiohttp app answering for two hosts, our callback app
served by uvicorn), on SQLite and PostgreSQL.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from aiohttp import ClientSession, web

from fairfetch.crawl.loop import Crawler
from fairfetch.store import websub_repo as repo
from fairfetch.websub.hub_client import callback_url
from fairfetch.websub.service import WebSubService
from fairfetch.websub.signature import sign

from .conftest import Subscriber, loopback_settings, running_subscriber

SECRET = "k" * 40
HEALTH = ("status", "error_count", "last_error", "last_success_at", "last_fetched_at")
#: Only a guard against hanging the suite: every wait below ends on an event well before it.
HANG_GUARD = 60.0


def _rss(guid: str) -> bytes:
    return (
        '<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>'
        f"<link>http://x.test/</link><item><guid>{guid}</guid><title>{guid}</title></item>"
        "</channel></rss>"
    ).encode()


@dataclasses.dataclass
class Publisher:
    port: int
    hits: dict[str, int]
    #: host -> answers served in turn (the last one repeats)
    script: dict[str, list[web.Response]]

    def url(self, host: str) -> str:
        return f"http://{host}:{self.port}/feed"


@pytest.fixture
async def publisher() -> AsyncIterator[Publisher]:
    pub = Publisher(0, {}, {})

    async def feed(request: web.Request) -> web.StreamResponse:
        host = request.host.split(":")[0]
        n = pub.hits.get(host, 0)
        pub.hits[host] = n + 1
        answers = pub.script[host]
        answer = answers[min(n, len(answers) - 1)]
        return web.Response(status=answer.status, body=answer.body,
                            headers=dict(answer.headers))

    app = web.Application()
    app.router.add_get("/feed", feed)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    pub.port = runner.addresses[0][1]
    try:
        yield pub
    finally:
        await runner.cleanup()


def _ok(guid: str) -> web.Response:
    return web.Response(body=_rss(guid), content_type="application/rss+xml")


THROTTLE = web.Response(status=429, headers={"Retry-After": "3600"})


@pytest.fixture
async def throttled(db_url: str, tmp_path: Any, publisher: Publisher) -> AsyncIterator[
        tuple[Subscriber, Any, Any]]:
    """A subscriber with two subscribed feeds: ``slow.test`` read once, then throttled for an
    hour (its key paused), and ``fine.test``, never crawled yet."""
    publisher.script["slow.test"] = [_ok("s1"), THROTTLE]
    publisher.script["fine.test"] = [_ok("f1")]
    settings = loopback_settings(tmp_path, resolve=("*.test:127.0.0.1",)).replace(db=db_url)
    async with running_subscriber(settings) as s:
        t0 = datetime.now(UTC)
        slow, _ = s.store.add_feed(publisher.url("slow.test"), now=t0, politeness_key="slow.test")
        fine, _ = s.store.add_feed(publisher.url("fine.test"), now=t0, politeness_key="fine.test")
        for f in (slow, fine):
            repo.create_subscription(s.store, feed_id=f.id, hub_url="http://127.0.0.1:9/",
                                     topic_url=f.url, secret=SECRET, requested_lease=86400,
                                     now=t0)
        assert (await s.crawler.refresh([slow.id])).counts["ok"] == 1
        assert (await s.crawler.refresh([slow.id])).counts["throttled"] == 1
        assert s.crawler.snapshot()["slow.test"].paused_until is not None
        try:
            yield s, s.store.get_feed(slow.id), s.store.get_feed(fine.id)
        finally:  # a re-fetch left waiting on the paused key would hold the teardown an hour
            for task in list(s.service._processing):
                task.cancel()


async def _push(s: Subscriber, feed_id: int, body: bytes) -> int:
    sub = repo.latest_for_feed(s.store, feed_id)
    assert sub is not None
    async with ClientSession() as session, session.post(
        callback_url(s.base, sub.callback_token), data=body,
        headers={"X-Hub-Signature": sign(SECRET, body, "sha256"),
                 "Content-Type": "application/atom+xml"},
    ) as resp:
        return resp.status


async def test_websub_push_for_a_throttled_feed_holds_up_no_other_push(
    throttled: tuple[Subscriber, Any, Any], publisher: Publisher
) -> None:
    s, slow, fine = throttled
    assert await _push(s, slow.id, b"<rss/>") == 202
    assert await _push(s, fine.id, b"<rss/>") == 202
    # Both pings are processed now: the throttled feed's must not hold the other one for the
    # hour its publisher asked for (nor the upkeep pass that drains the queue too).
    await asyncio.wait_for(s.service.wait_processed(2), HANG_GUARD)
    assert s.store.find_feed(fine.id) is not None
    assert repo.stored_entry_ids(s.store, fine.id, ["f1"]) == {"f1"}
    assert publisher.hits == {"slow.test": 2, "fine.test": 1}  # no knock on the closed door
    after = s.store.get_feed(slow.id)
    for col in HEALTH:  # a throttle, and a ping deferred by it, touch no health column
        assert getattr(after, col) == getattr(slow, col), col
    # the ping's re-fetch is not lost: the feed is due when its key reopens, not later
    assert after.next_crawl_at is not None
    assert after.next_crawl_at <= slow.next_crawl_at
    assert after.next_crawl_at >= datetime.now(UTC) + timedelta(minutes=50)
    assert repo.delivery_counts(s.store) == {"done": 2}
    assert s.crawler.snapshot()["slow.test"].queued == 0


def _named_ping(video: str) -> bytes:
    now = datetime.now(UTC).isoformat()
    return (
        '<feed xmlns="http://www.w3.org/2005/Atom" '
        'xmlns:yt="http://www.youtube.com/xml/schemas/2015">'
        f"<entry><id>yt:video:{video}</id><yt:videoId>{video}</yt:videoId>"
        f"<published>{now}</published><updated>{now}</updated></entry></feed>"
    ).encode()


async def test_websub_named_ping_for_a_throttled_feed_queues_no_refetch_on_the_paused_key(
    throttled: tuple[Subscriber, Any, Any], publisher: Publisher
) -> None:
    s, slow, _ = throttled
    s.service.refetch_timeout = HANG_GUARD  # answered without waiting on the paused key
    for _ in range(3):  # the hub retries a 503: each retry is one more ping
        assert await _push(s, slow.id, _named_ping("v1")) == 503
    assert s.crawler.snapshot()["slow.test"].queued == 0  # no pile of fetches at reopening
    assert publisher.hits["slow.test"] == 2
    after = s.store.get_feed(slow.id)
    for col in HEALTH:
        assert getattr(after, col) == getattr(slow, col), col


async def test_websub_push_after_a_restart_keeps_the_publishers_pause(
    throttled: tuple[Subscriber, Any, Any], publisher: Publisher
) -> None:
    """`run` restarted (or a second process on the store): its crawler has not seen the 429,
    but the pause is stored for every process, and a ping must not knock before it ends."""
    s, slow, _ = throttled
    crawler = Crawler(s.store, s.settings)
    service = WebSubService(s.store, s.settings, crawler=crawler)
    try:
        sub = repo.latest_for_feed(s.store, slow.id)
        assert sub is not None
        body = b"<rss/>"
        answer = await service.receive(
            sub.callback_token, {"x-hub-signature": sign(SECRET, body, "sha1")}, body)
        assert answer.status == 202
        assert await asyncio.wait_for(service.process_deliveries(), HANG_GUARD) == 1
        assert publisher.hits["slow.test"] == 2  # the first read and the 429: nothing since
        after = s.store.get_feed(slow.id)
        for col in HEALTH:
            assert getattr(after, col) == getattr(slow, col), col
        assert repo.delivery_counts(s.store) == {"done": 1}
    finally:
        await service.aclose()
        await crawler.aclose(abort=True)
