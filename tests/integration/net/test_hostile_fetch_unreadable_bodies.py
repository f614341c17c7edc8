"""A response whose body cannot be read (undecodable, over the cap, in a coding we never asked
for) is judged by its status when the body is not what was asked for: a 429 stays a throttle —
a schedule instruction, never a feed error — and a 410 stays gone. Raw bytes on 127.0.0.1."""

from __future__ import annotations

import asyncio
import gzip

import pytest

from .conftest import RawServer, fetch_raw, make_fetcher, net_settings, raw_server


@pytest.mark.parametrize(
    ("coding", "body", "cap"),
    [
        ("gzip", b"this is not gzip at all", 10_000),  # undecodable
        ("br", b"\x0b\x02\x80throttled", 10_000),  # not asked for
        ("gzip", gzip.compress(b"slow down " * 50_000), 10_000),  # over the cap
        ("", b"slow down " * 5_000, 10_000),  # identity, over the cap
    ],
)
@pytest.mark.parametrize(
    "status_line",
    [b"HTTP/1.1 429 Too Many Requests", b"HTTP/1.1 503 Service Unavailable"],
)
async def test_a_throttle_with_an_unreadable_body_is_still_a_throttle(
    status_line: bytes, coding: str, body: bytes, cap: int
) -> None:
    head = status_line + b"\r\nRetry-After: 120"
    if coding:
        head += b"\r\nContent-Encoding: " + coding.encode()
    r = await fetch_raw(head, body, max_body_bytes=cap)
    assert r.error_kind is None, r.error_detail
    assert r.throttled
    assert r.retry_after == 120


@pytest.mark.parametrize(
    ("status_line", "kind", "detail"),
    [
        (b"HTTP/1.1 410 Gone", "gone", "410"),
        (b"HTTP/1.1 404 Not Found", "http", "404"),
        (b"HTTP/1.1 500 Internal Server Error", "http", "500"),
    ],
)
async def test_an_error_status_with_an_unreadable_body_keeps_its_status(
    status_line: bytes, kind: str, detail: str
) -> None:
    r = await fetch_raw(status_line + b"\r\nContent-Encoding: gzip", b"not gzip")
    assert r.error_kind == kind
    assert detail in r.error_detail


async def test_a_throttle_whose_body_is_cut_off_is_still_a_throttle() -> None:
    # Content-Length promises 5000 bytes; the server closes after 9. Not a network failure
    # either (that would count towards an outage of ours): the 429 arrived whole.
    head = b"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 300\r\nContent-Length: 5000"
    r = await fetch_raw(head, b"slow down", length=False)
    assert r.error_kind is None, r.error_detail
    assert r.throttled
    assert r.retry_after == 300


async def test_a_2xx_body_cut_off_is_still_a_failure() -> None:
    # The other direction: a 2xx body is the point of the fetch, so a cut-off one fails.
    r = await fetch_raw(b"HTTP/1.1 200 OK\r\nContent-Length: 5000", b"<rss>", length=False)
    assert not r.ok
    assert r.error_kind == "connect"
    assert r.body == b""


async def test_a_throttle_whose_body_stalls_is_still_a_throttle() -> None:
    # Headers whole, then the body stops coming: the read timeout must not turn the 429 into
    # a 'timeout' (a network kind, counted towards an outage of ours).
    async def stall(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter, state: RawServer
    ) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 429 Slow\r\nRetry-After: 90\r\nContent-Length: 100\r\n\r\nab")
        await writer.drain()
        await asyncio.Event().wait()

    f = make_fetcher(net_settings(first_byte_timeout=0.2, total_timeout=30.0))
    try:
        async with raw_server(stall) as srv:
            r = await f.fetch(srv.url("/feed", host="stall.test"))
    finally:
        await f.aclose()
    assert r.error_kind is None, r.error_detail
    assert r.throttled
    assert r.retry_after == 90
