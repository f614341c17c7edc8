"""The first contract the crawler integrates against: RSS 2.0 and Atom 1.0 parse, HTML does not."""

from __future__ import annotations

from datetime import UTC, datetime

from fairfetch.feeds import parse_feed

RSS = b"""<?xml version="1.0" encoding="utf-8"?>
<rss version="2.0"><channel><title>T</title><link>https://ex.test/</link>
<item><title>One</title><link>/p/1</link><guid>g1</guid>
<pubDate>Sun, 19 May 2002 15:21:36 GMT</pubDate></item></channel></rss>"""

ATOM = b"""<feed xmlns="http://www.w3.org/2005/Atom"><title>A</title>
<entry><id>tag:a,1</id><title>E</title><link href="https://a.test/e"/>
<updated>2020-01-02T03:04:05+01:00</updated></entry></feed>"""


def test_feeds_smoke_rss20() -> None:
    feed = parse_feed(RSS, "https://ex.test/feed")
    assert feed.ok and feed.format == "rss20" and feed.title == "T"
    (entry,) = feed.entries
    assert entry.id == "g1"
    assert entry.link == "https://ex.test/p/1"
    assert entry.published == datetime(2002, 5, 19, 15, 21, 36, tzinfo=UTC)


def test_feeds_smoke_atom10() -> None:
    feed = parse_feed(ATOM)
    assert feed.ok and feed.format == "atom10"
    (entry,) = feed.entries
    assert entry.id == "tag:a,1" and entry.link == "https://a.test/e"
    assert entry.updated == datetime(2020, 1, 2, 2, 4, 5, tzinfo=UTC)


def test_feeds_smoke_html_is_not_a_feed() -> None:
    feed = parse_feed(b"<!doctype html><html><head><title>x</title></head></html>")
    assert not feed.ok
    assert "not a feed" in feed.problems
