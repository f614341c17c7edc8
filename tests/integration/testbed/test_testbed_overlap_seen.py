"""Requests that are in flight together are seen together, without gates or latency: the
platform-storm tests assert ``max_in_flight <= 2`` on a testbed with no latency, which is only
a measurement if a crawler sending everything at once would make that number grow."""

from __future__ import annotations

import asyncio

from fairfetch.testing import Testbed

N = 20


async def test_requests_sent_together_are_counted_in_flight_together(testbed: Testbed) -> None:
    specs = testbed.catalog(n=N, behaviours=["blog"])
    assert len(specs) == N
    assert testbed.options.latency == 0
    conns = [await asyncio.open_connection("127.0.0.1", testbed.base_port) for _ in specs]
    # Each connection answered once (by the control host, not counted) before the test: the
    # server has accepted it and reads from it, so the requests below reach it together.
    for reader, writer in conns:
        writer.write(b"GET /_testbed/clock HTTP/1.1\r\nHost: control.test\r\n\r\n")
        head = await reader.readuntil(b"\r\n\r\n")
        length = next(int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                      if line.lower().startswith(b"content-length:"))
        await reader.readexactly(length)
    assert (await testbed.stats())["total"]["requests"] == 0
    for (_, writer), spec in zip(conns, specs, strict=True):
        path = spec.url.split(str(testbed.base_port), 1)[1]
        writer.write(f"GET {path} HTTP/1.1\r\nHost: {spec.host}\r\nConnection: close\r\n\r\n"
                     .encode())
    answers = [await reader.read() for reader, _ in conns]
    for _, writer in conns:
        writer.close()
    assert all(a.startswith(b"HTTP/1.1 200 ") for a in answers)
    stats = await testbed.stats()
    assert stats["total"]["requests"] == N
    assert stats["total"]["max_in_flight"] == N
    assert {h["max_in_flight"] for h in stats["hosts"].values()} == {1}

    # and requests one after the other still never overlap
    testbed.reset_stats()
    for spec in specs[:3]:
        reader, writer = await asyncio.open_connection("127.0.0.1", testbed.base_port)
        path = spec.url.split(str(testbed.base_port), 1)[1]
        writer.write(f"GET {path} HTTP/1.1\r\nHost: {spec.host}\r\nConnection: close\r\n\r\n"
                     .encode())
        assert (await reader.read()).startswith(b"HTTP/1.1 200 ")
        writer.close()
    assert (await testbed.stats())["total"]["max_in_flight"] == 1
