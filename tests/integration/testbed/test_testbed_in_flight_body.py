"""A request is in flight until its answer's body has been handed over, not only while the
handler runs: the crawler's "one request per host" holds until it has read the body, so a
server that stops counting when the handler returns misses an overlap whenever a body is
larger than the socket buffers (a gzip bomb, a big page)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from aiohttp import web

from fairfetch.testing import Testbed, running_testbed

from .conftest import SMALL

#: far over what loopback's socket buffers hold, so the server cannot finish writing it
#: before the client reads
BIG = 64 << 20


class BigPages:
    name = "test-big-pages"
    platform = "big-platform"

    def matches(self, host: str) -> bool:
        return host == "big.test"

    async def handle(self, request: web.Request, host: str) -> web.StreamResponse:
        return web.Response(body=b"x" * BIG, content_type="text/plain")


@pytest.fixture
async def tb() -> AsyncIterator[Testbed]:
    async with running_testbed(seed=1, families=[BigPages()], **SMALL) as testbed:
        yield testbed


async def _send(tb: Testbed, request: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    reader, writer = await asyncio.open_connection("127.0.0.1", tb.base_port)
    writer.write(request.encode())
    await writer.drain()
    return reader, writer


async def test_a_request_whose_body_is_still_on_its_way_is_in_flight(tb: Testbed) -> None:
    slow, slow_w = await _send(tb, "GET / HTTP/1.1\r\nHost: big.test\r\n\r\n")
    head = await slow.readuntil(b"\r\n\r\n")  # answered, body not read
    assert head.startswith(b"HTTP/1.1 200 ")
    assert (await tb.stats())["hosts"]["big.test"]["in_flight"] == 1

    # a second request meanwhile overlaps the first one
    other, other_w = await _send(
        tb, "HEAD / HTTP/1.1\r\nHost: big.test\r\nConnection: close\r\n\r\n")
    assert (await other.read()).startswith(b"HTTP/1.1 200 ")
    other_w.close()
    stats = await tb.stats()
    for counter in (stats["hosts"]["big.test"], stats["platforms"]["big-platform"],
                    stats["total"]):
        assert (counter["max_in_flight"], counter["in_flight"]) == (2, 1)

    # the body read, the next answer on that connection means the first one has ended
    assert len(await slow.readexactly(BIG)) == BIG
    slow_w.write(b"HEAD / HTTP/1.1\r\nHost: big.test\r\nConnection: close\r\n\r\n")
    assert (await slow.read()).startswith(b"HTTP/1.1 200 ")
    slow_w.close()
    host = (await tb.stats())["hosts"]["big.test"]
    assert (host["requests"], host["in_flight"], host["max_in_flight"]) == (3, 0, 2)
    assert host["statuses"] == {"200": 3}
