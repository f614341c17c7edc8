"""A page number past the last page (an old link, a hand-edited URL) leads back to the results:
its pager links to the last page that has rows, never only to the empty page before it."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from .conftest import add_crawled


def _pager_links(html: str) -> dict[str, dict[str, list[str]]]:
    """rel -> the query of that pager link."""
    nav = re.search(r'<nav class="pager".*?</nav>', html, re.S)
    assert nav is not None, "no pager on the page"
    return {
        rel: parse_qs(urlsplit(href.replace("&amp;", "&")).query)
        for rel, href in re.findall(r'rel="(\w+)" href="([^"]*)"', nav.group(0))
    }


@pytest.mark.parametrize("path", ["/feeds", "/blogs", "/search?q=cast"])
def test_web_page_past_the_end_links_back_to_the_last_page(
    client: Any, store: Any, path: str
) -> None:
    for i in range(5):
        add_crawled(store, f"http://p{i}.test/feed", title=f"Cast {i}", kind="blog")
    sep = "&" if "?" in path else "?"
    r = client.get(f"{path}{sep}per_page=2&page=999")
    assert r.status_code == 200
    assert "No feeds." in r.text
    links = _pager_links(r.text)
    assert "next" not in links
    assert links["prev"]["page"] == ["3"]  # the last page (5 feeds, 2 a page), not page 998
    assert links["prev"]["per_page"] == ["2"]
    last = client.get(f"{path}{sep}per_page=2&page=3")
    assert len(re.findall(r'class="feed-title"', last.text)) == 1


def test_web_page_past_the_end_of_a_single_page_still_links_back(client: Any, store: Any) -> None:
    add_crawled(store, "http://one.test/feed", title="Only feed")
    r = client.get("/feeds?page=4")
    assert r.status_code == 200
    assert "Only feed" not in r.text
    assert _pager_links(r.text)["prev"]["page"] == ["1"]


def test_web_pages_within_range_keep_their_pager(client: Any, store: Any) -> None:
    for i in range(5):
        add_crawled(store, f"http://p{i}.test/feed", title=f"Cast {i}")
    links = _pager_links(client.get("/feeds?per_page=2&page=2").text)
    assert links["prev"]["page"] == ["1"]
    assert links["next"]["page"] == ["3"]
    one = client.get("/feeds?per_page=50").text
    assert '<nav class="pager"' not in one  # one page: no pager
