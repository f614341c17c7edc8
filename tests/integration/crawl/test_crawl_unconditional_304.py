"""A 304 is "what you have is current": an answer to a request that named what we have.

A server that answers 304 to a request without validators (no ETag, no Last-Modified: the
first crawl of a feed, or one whose server stopped sending them) has told us nothing: we hold
no copy to reuse. It was recorded as ``not_modified``: the feed became ``ok`` with a
``last_success_at``, never read, no title, no entry, and no failure anywhere to see — the
failure hidden inside a success. It is a failure of kind ``http`` now; a 304 to a conditional
request stays a success.
"""

from __future__ import annotations

from collections import Counter

from aiohttp import web

from fairfetch.crawl import Crawler, utcnow
from fairfetch.net.politeness import politeness_key
from fairfetch.store import CrawlWrite, SqlStore
from fairfetch.testing import loopback_server

from .conftest import loopback_settings


async def test_a_304_to_a_request_without_validators_is_a_failure(store: SqlStore) -> None:
    asked: list[dict[str, str]] = []

    async def handler(request: web.Request) -> web.StreamResponse:
        if request.path == "/robots.txt":
            return web.Response(status=404)
        asked.append(dict(request.headers))
        return web.Response(status=304)

    async with loopback_server(handler) as port:
        url = f"http://always304.test:{port}/feed"
        feed, _ = store.add_feed(url, now=utcnow(), politeness_key=politeness_key(url))
        async with Crawler(store, loopback_settings(store.url)) as crawler:
            summary = await crawler.crawl_due()
    assert len(asked) == 1
    assert "If-None-Match" not in asked[0]
    assert "If-Modified-Since" not in asked[0]
    assert summary.due == summary.accounted == 1
    assert summary.counts["not_modified"] == 0
    assert summary.counts["error"] == 1
    assert summary.errors == Counter({"http": 1})
    after = store.get_feed(feed.id)
    assert after.status == "error"
    assert after.error_count == 1
    assert after.last_success_at is None
    assert after.last_error is not None
    assert after.last_error.startswith("http: ")
    assert "304" in after.last_error
    crawls = store.feed_details(feed.id)["crawls"]
    assert [(c["outcome"], c["http_status"], c["error_kind"]) for c in crawls] == [
        ("error", 304, "http")
    ]


async def test_a_304_to_a_conditional_request_is_still_not_modified(store: SqlStore) -> None:
    asked: list[dict[str, str]] = []

    async def handler(request: web.Request) -> web.StreamResponse:
        if request.path == "/robots.txt":
            return web.Response(status=404)
        asked.append(dict(request.headers))
        return web.Response(status=304)

    async with loopback_server(handler) as port:
        url = f"http://cond304.test:{port}/feed"
        now = utcnow()
        feed, _ = store.add_feed(url, now=now, politeness_key=politeness_key(url))
        store.write([CrawlWrite(
            feed_id=feed.id, url=url, at=now, outcome="ok", politeness_key=feed.politeness_key,
            feed_changes={"status": "ok", "etag": 'W/"v1"', "next_crawl_at": now},
        )])  # fmt: skip
        async with Crawler(store, loopback_settings(store.url)) as crawler:
            summary = await crawler.crawl_due()
    assert [a.get("If-None-Match") for a in asked] == ['W/"v1"']  # a weak ETag, sent as is
    assert summary.counts["not_modified"] == 1
    after = store.get_feed(feed.id)
    assert after.status == "ok"
    assert after.etag == 'W/"v1"'  # kept: a 304 is about the copy it names
    assert after.last_success_at is not None
