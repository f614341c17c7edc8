"""HEAD on every kind of answer, on one kept-alive connection: the headers a GET would get and
no body, so the next response on that connection starts right after them. A body after a HEAD
answer is read by the client as the start of its next response (RFC 9110 §9.3.2)."""

from __future__ import annotations

import asyncio

import pytest

from fairfetch.testing import Testbed


@pytest.mark.parametrize(
    "behaviour", ["blog", "huge-body", "slow-drip", "gzip-bomb", "malformed", "letterbox"]
)
async def test_head_answers_headers_only_and_the_connection_stays_in_step(
    testbed: Testbed, behaviour: str
) -> None:
    spec = testbed.catalog(n=1, behaviours=[behaviour])[0]
    path = spec.url.split(str(testbed.base_port), 1)[1]
    reader, writer = await asyncio.open_connection("127.0.0.1", testbed.base_port)
    try:
        writer.write(
            f"HEAD {path} HTTP/1.1\r\nHost: {spec.host}\r\n\r\n"
            f"GET /robots.txt HTTP/1.1\r\nHost: {spec.host}\r\nConnection: close\r\n\r\n"
            .encode()
        )
        await writer.drain()
        head = await reader.readuntil(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200 "), head
        # the next bytes on the connection are the second response, not a body
        assert await reader.readexactly(9) == b"HTTP/1.1 "
        rest = await reader.read()
    finally:
        writer.close()
    assert b"User-agent: *" in rest
    host = (await testbed.stats())["hosts"][spec.host]
    assert (host["requests"], host["in_flight"], host["statuses"]) == (2, 0, {"200": 2})
