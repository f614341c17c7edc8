"""Links inside a feed's HTML, shown on its page, lead where the publisher meant: relative ones
are resolved against the entry's link, else the feed's site, else the feed's own URL."""

from __future__ import annotations

import re
from typing import Any

from fairfetch.feeds.model import Entry

from .conftest import add_crawled


def _hrefs_of(html: str, block: str) -> list[str]:
    return [
        href
        for part in re.findall(rf'<div class="{block}">(.*?)</div>', html, re.S)
        for href in re.findall(r'<a href="([^"]*)"', part)
    ]


def test_web_feed_page_resolves_relative_links_of_feed_html_against_the_publisher(
    client: Any, store: Any
) -> None:
    fid = add_crawled(
        store,
        "https://blog.example/feed.xml",
        link="https://blog.example/home/",
        description='<p>About <a href="about">us</a></p>',
        entries=[
            Entry(
                id="1",
                title="One",
                link="https://blog.example/p/1",
                summary='<a href="/p/2">next</a> <a href="#fn1">1</a>',
            ),
            Entry(id="2", title="Two", link=None, summary='<a href="?notice=deleted">x</a>'),
        ],
    )
    page = client.get(f"/feeds/{fid}").text
    assert _hrefs_of(page, "description") == ["https://blog.example/home/about"]
    assert sorted(_hrefs_of(page, "summary")) == [
        "https://blog.example/home/?notice=deleted",  # entry without a link: the feed's site
        "https://blog.example/p/1#fn1",
        "https://blog.example/p/2",
    ]
    stored = {e["entry_id"]: e["summary"] for e in store.entries_of(fid)}
    assert stored["1"] == '<a href="/p/2">next</a> <a href="#fn1">1</a>'  # stored as it came


def test_web_feed_page_resolves_against_the_feed_url_when_its_site_link_is_no_web_address(
    client: Any, store: Any
) -> None:
    fid = add_crawled(
        store,
        "https://blog.example/feeds/all.xml",
        link="javascript:alert(1)",
        description='<a href="/about">us</a>',
        entries=[
            Entry(id="1", title="One", link="data:text/html,x", summary='<a href="p/2">n</a>')
        ],
    )
    page = client.get(f"/feeds/{fid}").text
    assert _hrefs_of(page, "description") == ["https://blog.example/about"]
    assert _hrefs_of(page, "summary") == ["https://blog.example/feeds/p/2"]
