"""RFC 9110 Retry-After: both forms, the obsolete date forms, and the clamp."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from fairfetch.net.retry_after import (
    DEFAULT_RETRY_AFTER,
    MAX_RETRY_AFTER,
    MIN_RETRY_AFTER,
    parse_retry_after,
    retry_after_seconds,
)

NOW = datetime(1994, 11, 6, 8, 0, 0, tzinfo=UTC)  # 49 min 37 s before RFC 9110's example


def test_delay_seconds() -> None:
    assert parse_retry_after("120", NOW) == 120.0
    assert parse_retry_after("  3600 ", NOW) == 3600.0


def test_zero_is_clamped_up_to_a_minute() -> None:
    assert retry_after_seconds("0", NOW) == 0.0
    assert parse_retry_after("0", NOW) == MIN_RETRY_AFTER == 60.0


def test_ten_days_is_clamped_down_to_a_day() -> None:
    assert parse_retry_after(str(10 * 86400), NOW) == MAX_RETRY_AFTER == 86400.0
    later = format_datetime(NOW + timedelta(days=10), usegmt=True)
    assert parse_retry_after(later, NOW) == 86400.0


def test_huge_number_is_just_long() -> None:
    assert parse_retry_after("9" * 5000, NOW) == 86400.0


@pytest.mark.parametrize(
    "value",
    [
        "Sun, 06 Nov 1994 08:49:37 GMT",  # IMF-fixdate
        "Sunday, 06-Nov-94 08:49:37 GMT",  # obsolete RFC 850
        "Sun Nov  6 08:49:37 1994",  # obsolete asctime
    ],
)
def test_the_three_http_date_forms(value: str) -> None:
    assert retry_after_seconds(value, NOW) == 49 * 60 + 37
    assert parse_retry_after(value, NOW) == 49 * 60 + 37


def test_asctime_with_two_digit_day() -> None:
    assert retry_after_seconds("Wed Nov 16 08:00:00 1994", NOW) == 10 * 86400


def test_rfc850_two_digit_year_follows_rfc9110_not_email() -> None:
    # email.utils maps 70..99 to 19xx and 00..68 to 20xx; RFC 9110 says: more than 50 years in
    # the future means the most recent past year with those digits.
    now = datetime(2026, 1, 1, tzinfo=UTC)
    # '76' → 2076 is exactly 50 years ahead: not *more* than 50, so 2076 (email says 1976).
    assert retry_after_seconds("Friday, 01-Jan-76 00:00:00 GMT", now) == pytest.approx(
        (datetime(2076, 1, 1, tzinfo=UTC) - now).total_seconds()
    )
    # '77' → 2077 is 51 years ahead: 1977, in the past → 0.
    assert retry_after_seconds("Saturday, 01-Jan-77 00:00:00 GMT", now) == 0.0
    # '26' → 2026.
    assert retry_after_seconds("Thursday, 01-Jan-26 00:01:00 GMT", now) == 60.0


def test_past_date_counts_as_zero_then_clamps() -> None:
    earlier = format_datetime(NOW - timedelta(hours=3), usegmt=True)
    assert retry_after_seconds(earlier, NOW) == 0.0
    assert parse_retry_after(earlier, NOW) == 60.0


@pytest.mark.parametrize(
    "garbage",
    ["soon", "-5", "1.5", "12 seconds", "Sun, 06 Nov 1994", "Wed, 31 Feb 2024 00:00:00 GMT", "∞"],
)
def test_garbage_is_half_an_hour(garbage: str) -> None:
    assert retry_after_seconds(garbage, NOW) is None
    assert parse_retry_after(garbage, NOW) == DEFAULT_RETRY_AFTER == 1800.0


@pytest.mark.parametrize("absent", [None, "", "   "])
def test_absent_is_half_an_hour(absent: str | None) -> None:
    assert parse_retry_after(absent, NOW) == 1800.0


def test_naive_now_is_taken_as_utc() -> None:
    naive = NOW.replace(tzinfo=None)
    assert retry_after_seconds("Sun, 06 Nov 1994 08:49:37 GMT", naive) == 49 * 60 + 37
