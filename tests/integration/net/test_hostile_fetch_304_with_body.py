"""A 304 sent with a body: bytes after a complete answer, in the same packet.

A 304 has no body (RFC 9110 §15.4.5), but some servers send one anyway (a PHP page that
prints its template after ``header('HTTP/1.1 304')``). Browsers and curl read the 304 and
drop the rest; aiohttp's parser reads the extra bytes as the next answer's status line and
fails the whole request. Every conditional crawl of such a feed failed as ``http``: ten of them
and a healthy feed was dead. A conditional request whose answer cannot be read is now asked
once more without its conditions (the full answer is framed by its length), and the feed is
read. A server whose every answer is unreadable still fails, after two requests, not more.
"""

from __future__ import annotations

import asyncio

from fairfetch.net.fetch import Fetcher

from .conftest import RawServer, raw_server

FEED = b'<?xml version="1.0"?><rss version="2.0"><channel><title>t</title></channel></rss>'


async def _bodied_304(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, state: RawServer
) -> None:
    while True:
        head = await reader.readuntil(b"\r\n\r\n")
        state.requests += 1
        if b"if-none-match" in head.lower() or b"if-modified-since" in head.lower():
            writer.write(b'HTTP/1.1 304 Not Modified\r\nETag: "v1"\r\n\r\n<p>not modified</p>')
        else:
            writer.write(
                b'HTTP/1.1 200 OK\r\nContent-Type: application/rss+xml\r\nETag: "v1"\r\n'
                b"Content-Length: %d\r\n\r\n" % len(FEED) + FEED
            )
        await writer.drain()


async def _garbage(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, state: RawServer
) -> None:
    await reader.readuntil(b"\r\n\r\n")
    state.requests += 1
    writer.write(b"SSH-2.0-OpenSSH_9.6\r\n\r\n")
    await writer.drain()


async def test_a_304_with_a_body_is_read_again_without_conditions(fetcher: Fetcher) -> None:
    async with raw_server(_bodied_304) as srv:
        res = await fetcher.fetch(srv.url("/feed.xml", "site.test"), etag='"v1"')
    assert res.error_kind is None, res.error_detail
    assert res.status == 200
    assert res.body == FEED
    assert srv.requests == 2


async def test_an_unreadable_answer_is_asked_for_once_more_at_most(fetcher: Fetcher) -> None:
    async with raw_server(_garbage) as srv:
        conditional = await fetcher.fetch(srv.url("/feed.xml", "site.test"), etag='"v1"')
        asked = srv.requests
        plain = await fetcher.fetch(srv.url("/feed.xml", "site.test"))
    assert conditional.error_kind == plain.error_kind == "http"
    assert "malformed response" in conditional.error_detail
    assert asked == 2  # the conditional request and one without conditions
    assert srv.requests == 3  # an unconditional request is not repeated
