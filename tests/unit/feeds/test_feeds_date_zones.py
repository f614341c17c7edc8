"""Time zones in feed dates: a zone we can read moves the date; one we cannot read leaves the
date as UTC (rather than lost), and says so in ``problems``: never a wrong date silently."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from fairfetch.feeds import parse_feed
from fairfetch.feeds.dates import parse_date, parse_date_noted

T = datetime(2002, 5, 19, 15, 21, 36, tzinfo=UTC)


def _feed(pub: str) -> bytes:
    return (f"<rss version='2.0'><channel><title>Z</title><item><title>a</title>"
            f"<link>https://z.test/a</link><pubDate>{pub}</pubDate></item></channel></rss>"
            ).encode()


@pytest.mark.parametrize("text", [
    # feedparser's US zone names without daylight letter
    "Sun, 19 May 2002 07:21:36 PT", "Sun, 19 May 2002 10:21:36 ET",
    # ISO dates followed by a zone name, as some CMSs write them
    "2002-05-19 17:21:36 CEST", "2002-05-19 11:21:36 EDT", "2002-05-19T08:21:36 PDT",
])
def test_feeds_date_zones_named_zones_are_read(text: str) -> None:
    assert parse_date(text) == T
    assert parse_date_noted(text) == (T, None)


@pytest.mark.parametrize(("text", "zone"), [
    ("Sun, 19 May 2002 15:21:36 XYZ", "XYZ"),
    ("Sun, 19 May 2002 15:21:36 Europe/Paris", "Europe/Paris"),
    ("Sun, 19 May 2002 15:21:36 +2400", "+2400"),
    ("Sun, 19 May 2002 15:21:36 PST8PDT", "PST8PDT"),
    ("Sun May 19 15:21:36 XYZ 2002", "XYZ"),
    ("2002/05/19 15:21:36 bogus", "bogus"),
])
def test_feeds_date_zones_unknown_zone_is_utc_and_noted(text: str, zone: str) -> None:
    dt, note = parse_date_noted(text)
    assert dt == T
    assert note is not None
    assert zone in note
    feed = parse_feed(_feed(text))
    assert feed.entries[0].published == T
    assert any("published" in p and zone in p and "UTC" in p for p in feed.problems)


@pytest.mark.parametrize("text", [
    "Sun, 19 May 2002 15:21:36 GMT", "Sun, 19 May 2002 15:21:36", "2002-05-19T15:21:36Z",
    "Sun, 19 May 2002 15:21:36 +0000 (UTC)", "Sun, 19 May 2002 15:21:36 Z",
    "Sun, 19 May 2002 15:21:36 A",  # military: RFC 2822 says read as -0000
])
def test_feeds_date_zones_readable_or_missing_zone_is_not_noted(text: str) -> None:
    assert parse_date_noted(text) == (T, None)
    assert parse_feed(_feed(text)).problems == []
