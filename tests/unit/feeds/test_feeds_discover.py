"""Feed discovery in HTML, HTML sniffing, and WebSub links from Link headers."""

from __future__ import annotations

import pytest

from fairfetch.feeds.discover import (
    WELL_KNOWN_PATHS,
    find_feed_links,
    hub_and_self_from_link_header,
    looks_like_html,
)

PAGE = b"""<!doctype html><html><head><base href="https://cdn.site.test/blog/">
<link rel="alternate" type="application/rss+xml" title="RSS" href="feed.xml">
<link rel="alternate" type="application/atom+xml" href="/atom.xml">
<link rel="alternate" type="application/feed+json" href="https://site.test/feed.json">
<link rel="alternate" type="text/html" hreflang="fr" href="/fr/">
<link rel="stylesheet" href="/s.css"><link rel="alternate" type="application/json+oembed"
href="/oembed"><link rel="alternate" type="application/rss+xml" href="feed.xml">
</head><body><a href="/rss">not declared</a></body></html>"""


def test_feeds_discover_declared_feeds_in_order_resolved_and_deduplicated() -> None:
    assert find_feed_links(PAGE, "https://site.test/") == [
        "https://cdn.site.test/blog/feed.xml",
        "https://cdn.site.test/atom.xml",
        "https://site.test/feed.json",
    ]


def test_feeds_discover_well_known_paths_only_when_none_declared() -> None:
    page = b"<html><head><title>x</title><link rel=alternate type=text/html href=/a></head></html>"
    got = find_feed_links(page, "https://site.test/some/page?q=1")
    assert got == ["https://site.test" + p for p in WELL_KNOWN_PATHS]
    assert "https://site.test/feed" in got


def test_feeds_discover_garbage_html_does_not_raise() -> None:
    assert find_feed_links(b"\x00\xff<link rel=", "https://s.test/")[0] == "https://s.test/feed"
    assert find_feed_links(b"", "not a url") == []


@pytest.mark.parametrize("data", [
    b"<!DOCTYPE html><html>", b"  \n<html lang=en>", b"\xef\xbb\xbf<!doctype html>",
    b"<!-- c --><html>", b"<head><title>x</title></head>", b"<?xml version='1.0'?><html>",
    "<html>".encode("utf-16-le"),
])
def test_feeds_discover_looks_like_html(data: bytes) -> None:
    assert looks_like_html(data)


@pytest.mark.parametrize("data", [
    b"<?xml version='1.0'?><rss version='2.0'>", b"<rss><channel><description><p>x</p>",
    b'<feed xmlns="http://www.w3.org/2005/Atom">', b"<rdf:RDF>", b'{"version": "x"}', b"",
])
def test_feeds_discover_feeds_do_not_look_like_html(data: bytes) -> None:
    assert not looks_like_html(data)


@pytest.mark.parametrize(("value", "hubs", "self_url"), [
    ('<https://hub.test/>; rel="hub", <https://s.test/feed>; rel="self"',
     ["https://hub.test/"], "https://s.test/feed"),
    ("<https://a.test/>; rel=hub, <https://b.test/>; rel=hub", ["https://a.test/",
                                                               "https://b.test/"], None),
    ('<https://s.test/f?a=1,2>; rel="self alternate"; type="application/rss+xml"', [],
     "https://s.test/f?a=1,2"),
    ('<https://s.test/next>; rel="next"', [], None),
    ("", [], None), ("garbage", [], None),
])
def test_feeds_discover_link_header(value: str, hubs: list[str], self_url: str | None) -> None:
    assert hub_and_self_from_link_header(value) == (hubs, self_url)
