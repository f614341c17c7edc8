"""Feed links written in the pseudo-schemes that hand a URL to a feed reader or podcast app
(``feed://host/rss``, ``feed:https://host/rss``, ``itpc://``, ``pcast://``, ``podcast://``): the
feed is the http(s) URL inside. They were dropped as not http(s), and a page declaring its feed
only so fell back to guessing."""

from __future__ import annotations

import pytest

from fairfetch.feeds.discover import declared_feed_links


@pytest.mark.parametrize(("href", "url"), [
    ("feed://site.example.com/rss", "http://site.example.com/rss"),
    ("FEED://site.example.com/rss", "http://site.example.com/rss"),
    ("feed://site.example.com:8080/rss", "http://site.example.com:8080/rss"),
    ("feed:https://site.example.com/rss", "https://site.example.com/rss"),
    ("feed:http://site.example.com/rss", "http://site.example.com/rss"),
    ("itpc://pod.example.com/show.xml", "http://pod.example.com/show.xml"),
    ("pcast://pod.example.com/show.xml", "http://pod.example.com/show.xml"),
    ("podcast://pod.example.com/show.xml", "http://pod.example.com/show.xml"),
])
def test_feeds_discover_feed_pseudo_schemes_name_the_http_url(href: str, url: str) -> None:
    page = ('<html><head><link rel="alternate" type="application/rss+xml" href="' + href
            + '"></head></html>').encode()
    assert declared_feed_links(page, "https://site.example.com/") == [url]


@pytest.mark.parametrize("href", ["webcal://site.example.com/x", "feed:javascript:alert(1)",
                                  "feed:", "feed://", "feed:ftp://site.example.com/rss"])
def test_feeds_discover_other_schemes_stay_out(href: str) -> None:
    page = ('<html><head><link rel="alternate" type="application/rss+xml" href="' + href
            + '"></head></html>').encode()
    assert declared_feed_links(page, "https://site.example.com/") == []
