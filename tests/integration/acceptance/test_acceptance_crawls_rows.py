"""Issue 2, "Store": `crawls` holds one row per attempt — when, outcome, HTTP status, error kind,
bytes, duration, politeness key.

Other tests count crawls rows or read their outcome and error kind; none reads what a real crawl
wrote into `at`, `http_status`, `bytes`, `duration` and `politeness_key` (all not-null with a
default of 0 or '', so a crawler that never filled them would pass them all).
"""

from __future__ import annotations

from datetime import timedelta

import sqlalchemy as sa
from aiohttp import web

from fairfetch.crawl import Crawler
from fairfetch.net.politeness import politeness_key
from fairfetch.store import SqlStore
from fairfetch.store.tables import crawls
from fairfetch.testing import loopback_server

from .conftest import StepClock, loopback_settings

BODY = (
    b'<?xml version="1.0"?><rss version="2.0"><channel><title>Rows</title>'
    b"<link>http://rows.test/</link><item><guid>r1</guid><title>one</title></item>"
    b"<item><guid>r2</guid><title>two</title></item></channel></rss>"
)


async def test_acceptance_each_attempt_is_one_crawls_row_with_every_column(
    store: SqlStore, clock: StepClock
) -> None:
    answers = iter(["ok", "304", "404", "429"])
    current = {"answer": ""}

    async def handle(request: web.Request) -> web.StreamResponse:
        if request.path == "/robots.txt":
            return web.Response(status=404)
        answer = current["answer"]
        if answer == "ok":
            return web.Response(body=BODY, content_type="application/rss+xml",
                                headers={"ETag": '"v1"'})
        if answer == "304":
            assert request.headers.get("If-None-Match") == '"v1"'
            return web.Response(status=304, headers={"ETag": '"v1"'})
        if answer == "404":
            return web.Response(status=404, text="nope")
        return web.Response(status=429, headers={"Retry-After": "120"}, text="later")

    async with loopback_server(handle) as port:
        url = f"http://news.rows.test:{port}/feed.xml"
        key = politeness_key(url)
        assert key == "rows.test"
        store.add_feed(url, now=clock.now, politeness_key=key)
        settings = loopback_settings(store.url)
        times = []
        for _ in range(4):
            current["answer"] = next(answers)
            clock.now = clock.now + timedelta(days=1)  # past any pause the last answer set
            times.append(clock.now)
            async with Crawler(store, settings, clock=clock) as crawler:
                summary = await crawler.refresh([url])
            assert summary.accounted == 1

    with store.engine.connect() as conn:
        rows = conn.execute(sa.select(crawls).order_by(crawls.c.id)).mappings().all()
    assert len(rows) == 4  # one per attempt, throttle included
    feed_id = store.get_feed(url).id
    assert {r["feed_id"] for r in rows} == {feed_id}
    assert [r["at"] for r in rows] == times
    assert [r["outcome"] for r in rows] == ["ok", "not_modified", "error", "throttled"]
    assert [r["http_status"] for r in rows] == [200, 304, 404, 429]
    assert [r["error_kind"] for r in rows] == [None, None, "http", None]
    assert rows[0]["bytes"] == len(BODY)
    assert rows[1]["bytes"] == 0  # a 304 has no body
    assert [r["politeness_key"] for r in rows] == [key] * 4
    assert all(r["url"] == url for r in rows)
    assert all(r["duration"] > 0 for r in rows)  # measured, not the column's default of 0
    assert rows[0]["new_entries"] == 2
