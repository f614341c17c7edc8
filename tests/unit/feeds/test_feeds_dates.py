"""Dates as feeds write them, normalised to UTC; unreadable ones are None, never an exception."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fairfetch.feeds.dates import parse_date

T = datetime(2002, 5, 19, 15, 21, 36, tzinfo=UTC)


@pytest.mark.parametrize("text", [
    "Sun, 19 May 2002 15:21:36 GMT", "Sun, 19 May 2002 15:21:36 +0000",
    "Sun, 19 May 2002 10:21:36 -0500", "Sun, 19 May 2002 11:21:36 EDT",
    "Sun, 19 May 2002 17:21:36 +02:00", "19 May 2002 15:21:36 GMT", "19 May 02 15:21:36 GMT",
    "Sunday, 19 May 2002 15:21:36 GMT", "Sun, 19 May 2002 15:21:36 UT",
    "sun, 19 may 2002 15:21:36 gmt",
    "Sun, 19 May 2002 15:21:36 +0000 GMT", "Sun, 19 May 2002 15:21:36 GMT+00:00",
    "Sun,19 May 2002 15:21:36 GMT", "Sun, 19 May 2002 15:21:36 Z",
    "Sun, 19 May 2002 3:21:36 PM GMT",
    "2002-05-19T15:21:36Z", "2002-05-19T15:21:36+00:00", "2002-05-19T17:21:36+02:00",
    "2002-05-19T17:21:36+0200", "2002-05-19T15:21:36.000Z", "2002-05-19 15:21:36",
    "2002-05-19T15:21:36+00:00Z", "20020519T152136Z", "2002-05-19t15:21:36z",
    "Sun May 19 15:21:36 2002", "Sun May 19 15:21:36 UTC 2002", "May 19, 2002 15:21:36 GMT",
    "So, 19 Mai 2002 17:21:36 +0200", "dim., 19 mai 2002 15:21:36 GMT", "2002/05/19 15:21:36",
    "  Sun, 19 May 2002 15:21:36 GMT  ",
])
def test_feeds_dates_forms_in_the_wild(text: str) -> None:
    assert parse_date(text) == T


@pytest.mark.parametrize(("text", "expected"), [
    ("2002-05-19", datetime(2002, 5, 19, tzinfo=UTC)),
    ("19 May 2002", datetime(2002, 5, 19, tzinfo=UTC)),
    ("Sun, 19 May 2002 15:21 GMT", datetime(2002, 5, 19, 15, 21, tzinfo=UTC)),
    ("2002-05-19T15:21:36.123456789Z", datetime(2002, 5, 19, 15, 21, 36, 123456, tzinfo=UTC)),
    ("2002-05-19T24:00:00Z", datetime(2002, 5, 20, tzinfo=UTC)),
    ("Sun, 19 May 99 15:21:36 GMT", datetime(1999, 5, 19, 15, 21, 36, tzinfo=UTC)),
    ("Sun, 19 May 2002 15:21:36 XYZ", T),  # unknown zone: read as UTC rather than lost
])
def test_feeds_dates_edge_forms(text: str, expected: datetime) -> None:
    assert parse_date(text) == expected


@pytest.mark.parametrize("text", [None, "", "   ", "garbage", "sometime last week",
                                  "Mon, 31 Feb 2003 10:00:00 GMT", "2002-13-01", "99999-01-01",
                                  "Sun, 19 Foo 2002 15:21:36 GMT", "x" * 500,
                                  # a year with a digit too many is not its first four digits
                                  "Mon, 01 Jan 10000 00:00:00 GMT", "Mon, 01 Jan 99999 12:00 GMT",
                                  "May 19, 20021 15:21:36 GMT"])
def test_feeds_dates_unreadable_is_none(text: str | None) -> None:
    assert parse_date(text) is None


@given(st.text(max_size=80))
def test_feeds_dates_never_raise_and_are_utc(text: str) -> None:
    dt = parse_date(text)
    assert dt is None or (dt.utcoffset() is not None and dt.utcoffset().total_seconds() == 0)


@given(st.datetimes(min_value=datetime(1970, 1, 2), max_value=datetime(2100, 1, 1),
                    timezones=st.just(UTC)))
def test_feeds_dates_roundtrip_rfc822_and_iso(dt: datetime) -> None:
    dt = dt.replace(microsecond=0)
    assert parse_date(dt.strftime("%a, %d %b %Y %H:%M:%S GMT")) == dt
    assert parse_date(dt.isoformat()) == dt


@given(st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30)),
       st.sampled_from(["GMT", "UTC", "UT", "Z", "+0000", "-0000", "+0530", "-0800", "+1800",
                        "+1801", "-2400", "EST", "+00:00", "+99x9"]),
       st.sampled_from(["%a, %d %b %Y %H:%M:%S", "%a, %d %b %Y %H:%M:%S", "%A, %d %b %Y %H:%M:%S",
                        "%a, %d %B %Y %H:%M:%S", "%a, %d %b %y %H:%M:%S", "%a, %d %b %Y %H:%M"]))
def test_feeds_dates_rfc822_fast_path_agrees_with_the_rules(dt: datetime, zone: str,
                                                            form: str) -> None:
    from fairfetch.feeds import dates

    text = f"{dt.strftime(form)} {zone}"
    fast = dates._rfc822_fast(text)
    m = dates._RFC822.match(text)
    assert fast is None or fast == (dates._named(m) if m else None)
