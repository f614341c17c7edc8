"""Digest issue times across time zones and DST changes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairfetch.errors import InputError
from fairfetch.notify.backoff import MAX_DELAY, classify_reply, retry_at
from fairfetch.notify.schedule import next_issue, parse_weekday, schedule_label, zone

ZONES = [
    "UTC",
    "Europe/Paris",
    "America/New_York",
    "America/Sao_Paulo",
    "Australia/Sydney",
    "Australia/Lord_Howe",  # 30-minute DST shift
    "Asia/Kolkata",
    "Pacific/Chatham",
    "America/St_Johns",
]

instants = st.datetimes(
    min_value=datetime(2001, 1, 1), max_value=datetime(2037, 12, 31), timezones=st.just(UTC)
)


def test_notify_daily_issue_simple():
    after = datetime(2026, 1, 10, 6, 0, tzinfo=UTC)
    assert next_issue(after, "daily", 8, 0, "UTC") == datetime(2026, 1, 10, 8, tzinfo=UTC)
    # strictly after: at the issue instant, the next one is tomorrow's
    at = datetime(2026, 1, 10, 8, tzinfo=UTC)
    assert next_issue(at, "daily", 8, 0, "UTC") == datetime(2026, 1, 11, 8, tzinfo=UTC)
    # Paris in winter is UTC+1
    assert next_issue(after, "daily", 8, 0, "Europe/Paris") == datetime(
        2026, 1, 10, 7, tzinfo=UTC
    )


def test_notify_dst_spring_forward_and_fall_back():
    ny = "America/New_York"
    # 2026-03-08: 02:00 does not exist in New York; the issue goes out after the gap (03:00 EDT)
    got = next_issue(datetime(2026, 3, 8, 5, tzinfo=UTC), "daily", 2, 0, ny)
    assert got == datetime(2026, 3, 8, 7, tzinfo=UTC)
    assert got.astimezone(ZoneInfo(ny)).hour == 3
    # 2026-11-01: 01:00 happens twice; the first one (EDT) is used, and only once
    first = next_issue(datetime(2026, 11, 1, 4, tzinfo=UTC), "daily", 1, 0, ny)
    assert first == datetime(2026, 11, 1, 5, tzinfo=UTC)
    again = next_issue(first, "daily", 1, 0, ny)
    assert again.astimezone(ZoneInfo(ny)).date().isoformat() == "2026-11-02"
    # the local hour holds on both sides of a change: 08:00 in Paris is 07:00 then 06:00 UTC
    before = next_issue(datetime(2026, 3, 27, 12, tzinfo=UTC), "daily", 8, 0, "Europe/Paris")
    after = next_issue(before, "daily", 8, 0, "Europe/Paris")
    assert (before.hour, after.hour) == (7, 6)
    assert after - before == timedelta(hours=23)


def test_notify_weekly_issue():
    # 2026-01-07 is a Wednesday; a Monday digest at 09:00 Tokyo is 00:00 UTC on Monday 12th
    got = next_issue(datetime(2026, 1, 7, tzinfo=UTC), "weekly", 9, 0, "Asia/Tokyo")
    assert got == datetime(2026, 1, 12, 0, tzinfo=UTC)


@settings(max_examples=300, deadline=None)
@given(
    after=instants,
    zone_name=st.sampled_from(ZONES),
    hour=st.integers(0, 23),
    weekday=st.integers(0, 6),
    mode=st.sampled_from(["daily", "weekly"]),
)
def test_notify_issue_properties(after, zone_name, hour, weekday, mode):
    tz = ZoneInfo(zone_name)
    got = next_issue(after, mode, hour, weekday, zone_name)
    assert got > after
    assert got.tzinfo is not None
    assert got.utcoffset() == timedelta(0)
    span = timedelta(days=1 if mode == "daily" else 7)
    assert got - after <= span + timedelta(hours=3)
    local = got.astimezone(tz)
    # the reader's hour, unless a DST gap swallowed it (then at most the gap's length later)
    wall = local.replace(tzinfo=None)
    wanted = wall.replace(hour=hour, minute=0, second=0, microsecond=0)
    assert timedelta(0) <= wall - wanted <= timedelta(hours=1)
    if mode == "weekly":
        assert local.weekday() == weekday
    # exactly one issue per local day (daily) or week (weekly): the next one is a later date
    following = next_issue(got, mode, hour, weekday, zone_name)
    step = (following.astimezone(tz).date() - local.date()).days
    assert step == (1 if mode == "daily" else 7)


def test_notify_schedule_inputs():
    assert parse_weekday("Friday") == 4
    assert parse_weekday("6") == 6
    with pytest.raises(InputError):
        parse_weekday("someday")
    for odd in ("²", "٣", "9" * 30):  # digits int() refuses or reads otherwise: one clear error
        with pytest.raises(InputError):
            parse_weekday(odd)
    with pytest.raises(InputError):
        next_issue(datetime(2026, 1, 1, tzinfo=UTC), "daily", 8, 0, "Mars/Olympus")
    assert schedule_label("weekly", 7, 2) == "weekly@wed@07"
    assert schedule_label("daily", 18, 0) == "daily@18"


def test_notify_backoff_grows_and_is_capped():
    now = datetime(2026, 1, 1, tzinfo=UTC)
    delays = [retry_at(now, n) - now for n in range(1, 12)]
    assert delays == sorted(delays)
    assert delays[0] == timedelta(seconds=30)
    assert delays[1] == timedelta(seconds=60)
    assert max(delays) == MAX_DELAY


@pytest.mark.parametrize(
    ("code", "outcome"),
    [(250, "ok"), (421, "temporary"), (451, "temporary"), (452, "temporary"),
     (550, "permanent"), (554, "permanent"), (None, "temporary")],
)
def test_notify_reply_classes(code, outcome):
    assert classify_reply(code) == outcome


@pytest.mark.parametrize("name", ["America", "Europe/" + "x" * 300])
def test_notify_schedule_a_zone_that_is_no_file_is_an_input_error(name: str) -> None:
    """ZoneInfo reads the name as a path under tzdata: a region alone is a directory
    (IsADirectoryError), a name over 255 bytes too long a file name — OSErrors that reached the
    public /subscribe form as a 500 and `notify subscribe --tz` as a traceback."""
    with pytest.raises(InputError) as caught:
        zone(name)
    assert name in str(caught.value)
