"""Validators are the server's bytes, sent back on the next crawl. aiohttp reads a header value
holding a control character (``"a\\x01b"``, DEL) without complaint, and the crawler stores it;
but it refuses to send one ("Forbidden control character … header injection"): the next
conditional GET raised ValueError out of ``Fetcher.fetch``, which never raises for what a
server sent. The crawler records that as a bug of ours and leaves the feed as it was, so the
feed was never read again, one traceback a crawl. A validator that cannot be sent as received
cannot match anything either: it is left out, and the GET is unconditional (or keeps the other
validator)."""

from __future__ import annotations

import asyncio

import pytest

from .conftest import Behaviour, RawServer, make_fetcher, net_settings, raw_server


def _server(etag: bytes, last_modified: bytes, seen: list[bytes]) -> Behaviour:
    async def behaviour(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter, state: RawServer
    ) -> None:
        while True:
            seen.append(await reader.readuntil(b"\r\n\r\n"))
            state.requests += 1
            writer.write(
                b"HTTP/1.1 200 OK\r\nETag: " + etag + b"\r\nLast-Modified: " + last_modified
                + b"\r\nContent-Length: 2\r\n\r\nok"
            )
            await writer.drain()

    return behaviour


GOOD_DATE = b"Mon, 01 Jan 2024 00:00:00 GMT"


@pytest.mark.parametrize(
    ("etag", "last_modified", "sent"),
    [
        (b'"a\x01b"', GOOD_DATE, [b"If-Modified-Since: " + GOOD_DATE]),
        (b'"a\x7fb"', GOOD_DATE, [b"If-Modified-Since: " + GOOD_DATE]),
        (b'W/"v1"', b"Mon, 01 Jan 2024\x0b 00:00:00 GMT", [b'If-None-Match: W/"v1"']),
        (b'"\x1b[31m"', b"Mon,\x7f 01 Jan 2024 00:00:00 GMT", []),
    ],
)
async def test_a_validator_with_a_control_character_is_left_out_not_raised(
    etag: bytes, last_modified: bytes, sent: list[bytes]
) -> None:
    seen: list[bytes] = []
    f = make_fetcher(net_settings())
    try:
        async with raw_server(_server(etag, last_modified, seen)) as srv:
            first = await f.fetch(srv.url("/feed", "ctl.test"))
            assert first.ok
            second = await f.fetch(
                srv.url("/feed", "ctl.test"),
                etag=first.headers["etag"],
                last_modified=first.headers["last-modified"],
            )
            assert srv.requests == 2
    finally:
        await f.aclose()
    assert second.ok
    assert second.body == b"ok"
    conditions = [line for line in seen[1].split(b"\r\n") if line.startswith(b"If-")]
    assert conditions == sent
