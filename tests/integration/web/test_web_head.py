"""HEAD is answered wherever GET is (RFC 9110 §9.1: every general-purpose server supports
both), with the GET's status and headers and no body: uptime monitors, link checkers and
``curl -I`` ask with HEAD, and a 405 there reads as "the directory is down"."""

from __future__ import annotations

from typing import Any

import pytest

from .conftest import add_crawled


@pytest.mark.parametrize(
    "path",
    [
        "/",
        "/feeds",
        "/podcasts",
        "/search?q=feed",
        "/crawlstats",
        "/add",
        "/feeds.opml",
        "/metrics",
        "/api/v1/feeds",
        "/api/v1/stats",
        "/api/v1/entries",
        "/api/v1/openapi.json",
        "/static/style.css",
    ],
)
def test_web_head_answers_like_get_without_a_body(client: Any, store: Any, path: str) -> None:
    add_crawled(store, "http://head.example.test/feed.xml", title="Head feed")
    get = client.get(path)
    head = client.head(path)
    assert get.status_code == 200
    assert head.status_code == 200, (path, head.status_code, head.text)
    assert head.content == b""
    assert head.headers["content-type"] == get.headers["content-type"]
    assert head.headers["content-security-policy"] == get.headers["content-security-policy"]


def test_web_head_on_a_feed_page_and_an_unknown_one(client: Any, store: Any) -> None:
    feed_id = add_crawled(store, "http://head.example.test/feed.xml")
    assert client.head(f"/feeds/{feed_id}").status_code == 200
    assert client.head(f"/api/v1/feeds/{feed_id}").status_code == 200
    # HEAD tells the same story as GET: unknown is 404, a bad id 422, never a 405 or a 500.
    assert client.head("/feeds/999999").status_code == 404
    assert client.head("/api/v1/feeds/999999").status_code == 404
    assert client.head("/feeds/abc").status_code == 422
    assert client.head("/feeds?page=0").status_code == 422
    assert client.head("/nothing-here").status_code == 404


def test_web_head_does_not_run_a_writing_action(client: Any, store: Any) -> None:
    """Only what answers GET answers HEAD: a POST-only action stays 405 and does nothing."""
    feed_id = add_crawled(store, "http://head.example.test/feed.xml")
    r = client.head(f"/feeds/{feed_id}/delete")
    assert r.status_code == 405
    assert store.find_feed(feed_id) is not None
