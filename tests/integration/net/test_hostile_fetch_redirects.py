"""Redirects with Locations a browser would still follow, written as raw bytes on 127.0.0.1:
the next request must go where the Location says, percent-encoded, never to a URL with some
of its bytes silently dropped (the hop is recorded, and a permanent one moves the feed)."""

from __future__ import annotations

import asyncio

import pytest

from .conftest import RawServer, make_fetcher, net_settings, raw_server


@pytest.mark.parametrize(
    ("location", "path"),
    [
        (b"/caf\xe9.xml", b"/caf%E9.xml"),  # Latin-1, not UTF-8
        (b"/caf\xc3\xa9 feed.xml", b"/caf%C3%A9%20feed.xml"),  # raw UTF-8 and a space
        (b"/f\xe9ed?q=\xff", b"/f%E9ed?q=%FF"),
    ],
    ids=["latin-1", "utf-8-and-space", "latin-1-query"],
)
async def test_a_location_with_raw_bytes_is_followed_percent_encoded(
    location: bytes, path: bytes
) -> None:
    lines: list[bytes] = []

    async def behaviour(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter, state: RawServer
    ) -> None:
        while True:
            line = (await reader.readuntil(b"\r\n\r\n")).split(b"\r\n", 1)[0]
            lines.append(line)
            if line.startswith(b"GET /start "):
                head = b"HTTP/1.1 301 Moved\r\nLocation: " + location
                writer.write(head + b"\r\nContent-Length: 0\r\n\r\n")
            else:
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            await writer.drain()

    f = make_fetcher(net_settings())
    try:
        async with raw_server(behaviour) as srv:
            r = await f.fetch(srv.url("/start", host="moved.test"))
    finally:
        await f.aclose()
    assert r.ok
    assert lines[1] == b"GET " + path + b" HTTP/1.1"
    assert r.hops[0].location.endswith(path.decode())
    assert r.final_url.endswith(path.decode())
