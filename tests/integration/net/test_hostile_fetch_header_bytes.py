"""Header values with bytes that are not UTF-8 (Latin-1 from old servers: an ETag, a filename,
a reason phrase). aiohttp hands them on as lone surrogates, which no database driver will
store ("surrogates not allowed"): the crawler keeps ETag and Last-Modified, and the failure's
detail goes into last_error. What a fetch returns is text that can be stored: such bytes are
read as Latin-1, as RFC 9110 §5.5 says they historically were. Raw bytes on 127.0.0.1."""

from __future__ import annotations

import asyncio
import sqlite3

from fairfetch.net.fetch import Fetcher

from .conftest import RawServer, fetch_raw, raw_server


def storable(text: str) -> bool:
    db = sqlite3.connect(":memory:")
    try:
        db.execute("CREATE TABLE t (v TEXT)")
        db.execute("INSERT INTO t VALUES (?)", (text,))
    except UnicodeEncodeError:
        return False
    finally:
        db.close()
    return True


async def test_latin1_header_values_come_back_storable() -> None:
    head = (
        b'HTTP/1.1 200 OK\r\nETag: "caf\xe9"\r\n'
        b"Last-Modified: Mon, 01 Jan 2024 00:00:00 GMT\xa0\r\n"
        b'Content-Disposition: attachment; filename="r\xe9sum\xe9.xml"'
    )
    r = await fetch_raw(head, b"ok")
    assert r.ok
    assert r.headers["etag"] == '"caf\xe9"'
    assert r.headers["content-disposition"] == 'attachment; filename="r\xe9sum\xe9.xml"'
    for value in r.headers.values():
        assert storable(value), repr(value)


async def test_a_latin1_reason_phrase_makes_a_storable_detail() -> None:
    r = await fetch_raw(b"HTTP/1.1 404 Introuvable \xe9t\xe9", b"")
    assert r.error_kind == "http"
    assert r.error_detail == "404 Introuvable \xe9t\xe9"
    assert storable(r.error_detail)


async def test_a_latin1_location_that_cannot_be_followed_makes_a_storable_detail() -> None:
    r = await fetch_raw(b"HTTP/1.1 302 Found\r\nLocation: ftp://files.test/\xe9", b"")
    assert r.error_kind == "redirect"
    assert storable(r.error_detail)
    assert all(storable(v) for v in r.headers.values())


async def test_repeated_x_robots_tag_headers_stay_apart(fetcher: Fetcher) -> None:
    """X-Robots-Tag is no comma list across headers: each may name the crawler it is for
    (Google: "otherbot: nofollow" in one header, "noindex" for everyone in another). Joined
    with a comma, as list-valued fields are, the second header's noindex read as otherbot's.
    Kept a line each; other repeated fields are still joined by commas."""

    async def behaviour(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter, state: RawServer
    ) -> None:
        await reader.readuntil(b"\r\n\r\n")
        state.requests += 1
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nX-Robots-Tag: otherbot: nofollow\r\n"
            b"X-Robots-Tag: noindex\r\nVary: Accept\r\nVary: Cookie\r\nContent-Length: 2\r\n\r\nok"
        )
        await writer.drain()

    async with raw_server(behaviour) as srv:
        res = await fetcher.fetch(srv.url("/", "site.test"))
    assert res.headers["x-robots-tag"] == "otherbot: nofollow\nnoindex"
    assert res.headers["vary"] == "Accept, Cookie"
