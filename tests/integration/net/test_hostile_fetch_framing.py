"""Chunked framing that breaks after the body has begun (a bad chunk size, endless trailers),
written as raw bytes on 127.0.0.1. aiohttp notices the violation but does not pass it to the
body being read, and stops its read timer: the fetch waited for the total time cap and came
back as 'timeout' — a network kind, which the outage detector counts as ours. It must come back
as 'http' (the server's malformed response), without waiting for the total cap. A body cut off
by the peer closing stays 'connect' (test_net_fetch)."""

from __future__ import annotations

import asyncio

import pytest

from .conftest import Behaviour, RawServer, make_fetcher, net_settings, raw_server

FIRST = 300_000  # a first chunk long enough that the rest arrives in later reads


def chunked_then(tail: bytes, *, hold: bool) -> Behaviour:
    async def behaviour(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter, state: RawServer
    ) -> None:
        await reader.readuntil(b"\r\n\r\n")
        state.requests += 1
        head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        writer.write(head + b"%x\r\n" % FIRST + b"a" * FIRST + b"\r\n")
        await writer.drain()
        writer.write(tail)
        await writer.drain()
        if hold:
            await asyncio.Event().wait()

    return behaviour


TRAILERS = b"0\r\n" + b"X-T: t\r\n" * 20_000


@pytest.mark.parametrize(
    ("tail", "says"),
    [
        (b"zz\r\nabc\r\n0\r\n\r\n", "chunk size"),
        (b"FFFFFFFFFFFFFFFFFFFFFFFF\r\nab\r\n", "chunk size"),
        (TRAILERS, "header"),
    ],
    ids=["bad-chunk-size", "chunk-size-overflow", "endless-trailers"],
)
@pytest.mark.parametrize("hold", [True, False], ids=["held-open", "then-closed"])
async def test_chunked_framing_broken_mid_body_is_http_not_a_timeout(
    tail: bytes, says: str, hold: bool
) -> None:
    # total_timeout far above first_byte_timeout: reaching it is the defect
    f = make_fetcher(net_settings(first_byte_timeout=0.3, total_timeout=5.0))
    try:
        async with raw_server(chunked_then(tail, hold=hold)) as srv:
            r = await f.fetch(srv.url("/feed", host="chunks.test"))
    finally:
        await f.aclose()
    assert r.error_kind == "http", r.error_detail
    assert r.status == 200
    assert says in r.error_detail.lower()
    assert "total time" not in r.error_detail


async def test_a_chunked_body_cut_off_by_the_peer_stays_connect() -> None:
    f = make_fetcher(net_settings(first_byte_timeout=0.3, total_timeout=5.0))
    try:
        async with raw_server(chunked_then(b"10\r\nabc", hold=False)) as srv:
            r = await f.fetch(srv.url("/feed", host="chunks.test"))
    finally:
        await f.aclose()
    assert r.error_kind == "connect"
    assert "not enough data" in r.error_detail.lower()
