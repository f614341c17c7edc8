"""Answers whose header bytes no database will bind as they are: the crawl goes on, on SQLite
and on PostgreSQL.

aiohttp hands a header byte that is not UTF-8 over as a lone surrogate (``\\udce9``), and a
status line may carry a NUL. Stored as they are, one such publisher's ETag or reason phrase
failed the whole batch's transaction (SQLite: "surrogates not allowed"; PostgreSQL also "cannot
contain NUL"), so every feed in it went unwritten, stayed due, and failed the next crawl the same
way: the seeds/000 incident through another door.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager

import pytest

from fairfetch.crawl import Crawler, utcnow
from fairfetch.net.politeness import politeness_key
from fairfetch.store import SqlStore, open_store

from .conftest import loopback_settings

FEED = (
    b'<?xml version="1.0"?><rss version="2.0"><channel><title>T</title>'
    b"<item><guid>one</guid><title>One</title></item></channel></rss>"
)

#: path -> the raw answer (status line and headers as bytes on the wire)
ANSWERS: dict[str, bytes] = {
    "/etag-latin1": b'HTTP/1.1 200 OK\r\nETag: "caf\xe9"\r\n'
    b"Last-Modified: Mon, 30 Nov 2026 10:00:00 GMT\xff\r\n",
    "/reason-latin1": b"HTTP/1.1 404 Nicht gef\xfcnden\r\n",
    "/reason-nul": b"HTTP/1.1 404 Not\x00Found\r\n",
    "/plain": b'HTTP/1.1 200 OK\r\nETag: "fine"\r\n',
}


@asynccontextmanager
async def raw_feeds() -> AsyncIterator[int]:
    async def on_conn(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                path = head.split(b" ", 2)[1].decode()
                status = ANSWERS.get(path, b"HTTP/1.1 404 Not Found\r\n")
                body = FEED if status.startswith(b"HTTP/1.1 200") else b"no"
                writer.write(status + b"Content-Length: %d\r\n\r\n" % len(body) + body)
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(on_conn, "127.0.0.1", 0)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        server.close()
        await server.wait_closed()


@pytest.fixture
def store(db_url: str) -> Iterator[SqlStore]:
    s = open_store(db_url)
    yield s
    s.close()


async def test_unbindable_header_bytes_fail_no_batch(store: SqlStore) -> None:
    async with raw_feeds() as port:
        settings = loopback_settings(store.url)
        urls = {path: f"http://site.test:{port}{path}" for path in ANSWERS}
        now = utcnow()
        for url in urls.values():
            store.add_feed(url, now=now, politeness_key=politeness_key(url))
        async with Crawler(store, settings) as crawler:
            summary = await crawler.crawl_due()
            assert summary.due == summary.accounted == len(ANSWERS)
            assert summary.counts["ok"] == 2
            assert summary.counts["error"] == 2

            plain = store.get_feed(urls["/plain"])
            assert plain.status == "ok"
            assert plain.entry_count == 1
            assert plain.etag == '"fine"'
            odd = store.get_feed(urls["/etag-latin1"])
            assert odd.status == "ok"
            assert odd.entry_count == 1
            assert odd.etag is not None
            assert odd.etag.startswith('"caf')
            for path in ("/reason-latin1", "/reason-nul"):
                feed = store.get_feed(urls[path])
                assert feed.status == "error", path
                assert feed.error_count == 1, path
                assert feed.last_error is not None
                assert feed.last_error.startswith("http: 404")

            # The stored ETag goes back as If-None-Match: that request must be sendable too.
            store.set_due([odd.id], now)
            again = await crawler.crawl_due()
            assert again.due == again.accounted == 1
            assert again.counts["error"] == 0
