"""The testbed's YouTube-like hub when a subscriber dies under its request: the connection
closes without an answer (a process killed after reading the ping). A hub retries such a
delivery like any non-2xx, and records a verification that got no answer; the kill tests of
the WebSub callback depend on it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import aiohttp
import pytest

from fairfetch.testbed.youtube import HUB_HOST, RETRY_BASE, HubSubscription, world_of
from fairfetch.testing import Testbed, running_testbed

from .conftest import SMALL

#: hang guard for awaiting the hub's own work (never reached when the hub is right)
GUARD = 30.0


class DyingSubscriber:
    """A loopback HTTP endpoint that reads each request, then (while ``dying``) closes the
    connection without a word, as a SIGKILLed process does; else it answers 204."""

    def __init__(self) -> None:
        self.dying = True
        self.requests: list[bytes] = []
        self.port = 0
        self._server: asyncio.Server | None = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n"):
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        self.requests.append(head + await reader.readexactly(length))
        if not self.dying:
            writer.write(b"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n")
            await writer.drain()
        writer.close()

    async def __aenter__(self) -> DyingSubscriber:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()


@pytest.fixture
async def tb() -> AsyncIterator[Testbed]:
    async with running_testbed(seed=4, **SMALL) as testbed:
        yield testbed


async def test_hub_retries_a_ping_whose_subscriber_closed_without_answering(tb: Testbed) -> None:
    world = world_of(tb)
    channel = world.channel_ids()[0]
    topic = world.feed_url(channel)
    async with DyingSubscriber() as sub:
        callback = f"http://127.0.0.1:{sub.port}/websub/callback/t0k3n"
        world.subscriptions[(topic, callback)] = HubSubscription(
            topic, callback, None, world.now() + 86400)
        video, statuses = await world.publish_and_ping(channel)
        assert statuses == [None]
        assert len(sub.requests) == 1
        assert [(p.video, p.attempts) for p in world.pending] == [(video.id, 1)]
        assert [(d.video, d.attempt, d.status) for d in world.log] == [(video.id, 1, None)]

        sub.dying = False
        assert await world.retry_due() == []  # not before its time on the testbed clock
        tb.clock.advance(RETRY_BASE)
        assert await world.retry_due() == [204]
        assert len(sub.requests) == 2
        assert sub.requests[1].endswith(sub.requests[0].partition(b"\r\n\r\n")[2])
        assert world.pending == []


async def test_hub_records_a_verification_that_got_no_answer(tb: Testbed) -> None:
    world = world_of(tb)
    topic = world.feed_url(world.channel_ids()[0])
    async with DyingSubscriber() as sub, aiohttp.ClientSession() as client:
        callback = f"http://127.0.0.1:{sub.port}/websub/callback/t0k3n"
        async with client.post(
            f"http://127.0.0.1:{tb.base_port}/subscribe",
            headers={"Host": HUB_HOST},
            data={"hub.mode": "subscribe", "hub.topic": topic, "hub.callback": callback},
        ) as resp:
            assert resp.status == 202
        await asyncio.wait_for(world.wait_verifications(1), GUARD)
    assert world.verifications == [("subscribe", callback, 0)]
    assert world.subscriptions == {}


@pytest.mark.parametrize("value", ["soon", "1h"])
async def test_publish_control_refuses_an_appear_after_that_is_no_delay(
    tb: Testbed, value: str
) -> None:
    world = world_of(tb)
    videos = sum(len(v) for v in world.channels.values())
    async with aiohttp.ClientSession() as client, client.post(
        f"http://127.0.0.1:{tb.base_port}/_control/publish?appear_after={value}",
        headers={"Host": "www.youtube.test"},
    ) as resp:
        assert resp.status == 400
        assert f"appear_after={value!r}" in await resp.text()
    assert sum(len(v) for v in world.channels.values()) == videos


async def test_channel_feeds_are_the_same_whenever_the_platform_is_first_asked() -> None:
    """Same seed, same testbed time: the same bytes, however long the clock ran before the
    first request to the platform (its history must not be dated from that request)."""
    bodies = []
    for early in (True, False):
        async with running_testbed(seed=4, **SMALL) as testbed:
            if early:
                world_of(testbed)
            testbed.clock.advance(3600)
            world = world_of(testbed)
            bodies.append([world.render(c).replace(f":{testbed.base_port}/".encode(), b":PORT/")
                           for c in world.channel_ids()])
    assert bodies[0] == bodies[1]
