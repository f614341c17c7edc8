"""A throttle that carries Retry-After twice (a proxy and the origin each adding one). The fetch
joins repeated headers with ", ", which made "3600, 3600" or "120, 7200" unreadable, so the
feed came back after the 30-minute default — sooner than either value asked. Each value is read
on its own, and the longest readable one is kept: coming back later than asked is polite,
sooner is not. Raw bytes on 127.0.0.1."""

from __future__ import annotations

import pytest

from .conftest import fetch_raw


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ((b"3600", b"3600"), 3600.0),
        ((b"120", b"7200"), 7200.0),
        ((b"7200", b"soon"), 7200.0),
        ((b"Wed, 21 Oct 2015 07:28:00 GMT", b"600"), 600.0),  # a date in the past is 0
    ],
    ids=["same-twice", "two-values", "one-unreadable", "past-date-and-delay"],
)
@pytest.mark.parametrize("status", [b"429 Too Many Requests", b"503 Service Unavailable"])
async def test_a_retry_after_sent_twice_keeps_the_longest_readable_value(
    status: bytes, values: tuple[bytes, ...], expected: float
) -> None:
    head = b"HTTP/1.1 " + status + b"".join(b"\r\nRetry-After: " + v for v in values)
    r = await fetch_raw(head, b"")
    assert r.throttled
    assert r.error_kind is None
    assert r.retry_after == expected
