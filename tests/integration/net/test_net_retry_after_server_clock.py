"""A Retry-After HTTP-date is read against the answer's own Date, when it has a sane one.

A server whose clock runs an hour ahead stamps both its Date and its Retry-After date with that
clock: "come back two minutes after my now". Read against our clock it asked for 62 minutes;
read against its Date, two — what it meant. A Date that is no date, or more than a day from
ours, is not trusted (our clock then, as before). Raw bytes on 127.0.0.1."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from .conftest import fetch_raw


def _date(at: datetime) -> bytes:
    return format_datetime(at, usegmt=True).encode()


@pytest.mark.parametrize("skew_hours", [1.0, -1.0, 5.0])
async def test_net_retry_after_date_is_read_against_the_servers_date(skew_hours: float) -> None:
    server_now = datetime.now(UTC).replace(microsecond=0) + timedelta(hours=skew_hours)
    head = (
        b"HTTP/1.1 429 Too Many Requests\r\nDate: " + _date(server_now)
        + b"\r\nRetry-After: " + _date(server_now + timedelta(seconds=600))
    )
    r = await fetch_raw(head, b"")
    assert r.throttled
    assert r.retry_after == 600.0


@pytest.mark.parametrize(
    "date",
    [b"not a date", _date(datetime(1970, 1, 1, tzinfo=UTC)), None],
    ids=["garbage", "two-days-off-or-more", "absent"],
)
async def test_net_retry_after_date_without_a_sane_server_date_uses_our_clock(
    date: bytes | None,
) -> None:
    ours = datetime.now(UTC).replace(microsecond=0)
    head = b"HTTP/1.1 429 Too Many Requests\r\nRetry-After: " + _date(
        ours + timedelta(seconds=3600)
    )
    if date is not None:
        head += b"\r\nDate: " + date
    r = await fetch_raw(head, b"")
    assert r.throttled
    assert r.retry_after is not None
    # our clock: about an hour (the fetch takes a moment); read against 1970, a day (the cap)
    assert 3000.0 <= r.retry_after <= 3600.0
