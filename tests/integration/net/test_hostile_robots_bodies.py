"""robots.txt answered 200 with a body that cannot be decoded (a gzip stream cut short, a
corrupt one, a coding we never asked for): that is no answer — the server failed on another
URL, like a 5xx — not "no rules" cached for a day with every path allowed. Raw bytes on
127.0.0.1."""

from __future__ import annotations

import asyncio
import gzip

import pytest

from .conftest import Behaviour, RawServer, make_fetcher, net_settings, raw_server

RULES = b"User-agent: *\nDisallow: /private/\n" + b"# padding\n" * 200


def robots_answer(coding: bytes, body: bytes) -> Behaviour:
    async def behaviour(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter, state: RawServer
    ) -> None:
        while True:
            request = await reader.readuntil(b"\r\n\r\n")
            state.requests += 1
            if b"/robots.txt" in request.split(b"\r\n", 1)[0]:
                head = b"HTTP/1.1 200 OK\r\nContent-Encoding: " + coding
                writer.write(head + b"\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
            else:
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            await writer.drain()

    return behaviour


@pytest.mark.parametrize(
    ("coding", "body"),
    [
        (b"gzip", gzip.compress(RULES)[:-8]),
        (b"gzip", gzip.compress(RULES)[:40]),
        (b"gzip", b"\x1f\x8b\x08\x00garbage" * 5),
        (b"br", b"\x0b\x02\x80rules"),
    ],
    ids=["gzip-no-trailer", "gzip-cut", "gzip-corrupt", "br"],
)
async def test_a_robots_txt_with_an_unreadable_body_allows_nothing_for_now(
    coding: bytes, body: bytes
) -> None:
    f = make_fetcher(net_settings())
    try:
        async with raw_server(robots_answer(coding, body)) as srv:
            r = await f.fetch(srv.url("/private/x", host="site.test"), check_robots=True)
            rules = f.robots.cached(srv.url("/", host="site.test"))
    finally:
        await f.aclose()
    assert srv.requests == 1  # robots.txt only: /private/x was not fetched
    assert not r.ok
    assert r.error_kind == "robots_unreachable"  # deferred: not the feed's failure
    assert rules is not None
    assert rules.state == "disallow_all"
    assert rules.expires_at - rules.fetched_at == pytest.approx(f.robots.error_ttl)
