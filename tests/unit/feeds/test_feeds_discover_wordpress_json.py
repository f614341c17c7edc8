"""A plain ``application/json`` alternate is a JSON Feed only when it says so (its title or its
URL names a feed). Every WordPress page (5.5 and later) declares its REST API resource as
``<link rel="alternate" title="JSON" type="application/json" href="/wp-json/wp/v2/posts/42">``:
taken for a feed, it was added unchecked beside the real feeds, and failed every crawl as
'not a feed'."""

from __future__ import annotations

import json

import pytest

from fairfetch.feeds.discover import declared_feed_links, find_feed_links

from .conftest import DATA

DISCOVERY = DATA / "discovery"


@pytest.mark.parametrize("name", sorted(p.stem for p in DISCOVERY.glob("*.html")))
def test_feeds_discover_golden_pages(name: str) -> None:
    # a page as it is served (WordPress, an old site's feed: links), and the feeds it declares
    # beside it
    expected = json.loads((DISCOVERY / f"{name}.expected.json").read_text())
    page = (DISCOVERY / f"{name}.html").read_bytes()
    assert declared_feed_links(page, expected["url"]) == expected["declared"]


def test_feeds_discover_a_page_with_only_the_rest_alternate_falls_back_to_guesses() -> None:
    page = (b'<html><head><link rel="alternate" title="JSON" type="application/json" '
            b'href="/wp-json/wp/v2/pages/2"></head></html>')
    assert declared_feed_links(page, "https://wp.example.com/") == []
    assert find_feed_links(page, "https://wp.example.com/")[0] == "https://wp.example.com/feed"


@pytest.mark.parametrize(("attrs", "url"), [
    (b'title="JSON Feed" href="/data/items.json"', "https://site.example.com/data/items.json"),
    (b'href="/feed.json"', "https://site.example.com/feed.json"),
    (b'title="Posts" href="/feeds/all.json"', "https://site.example.com/feeds/all.json"),
])
def test_feeds_discover_json_feeds_declared_as_plain_json_are_kept(attrs: bytes,
                                                                    url: str) -> None:
    page = b'<html><head><link rel="alternate" type="application/json" ' + attrs + b"></head>"
    assert declared_feed_links(page, "https://site.example.com/") == [url]


def test_feeds_discover_an_unreadable_json_href_is_skipped() -> None:
    page = (b'<html><head><link rel="alternate" type="application/json" '
            b'href="http://[::1/feed.json"></head></html>')
    assert declared_feed_links(page, "https://site.example.com/") == []
