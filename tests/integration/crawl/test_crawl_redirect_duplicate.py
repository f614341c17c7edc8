"""A feed whose confirmed permanent redirect lands on a URL another feed of the directory has.

Before: the store refused the move without a word, the feed kept its old URL and the redirect,
and both feeds were crawled for ever — the same URL fetched twice each round, the same items
stored twice, and nothing in ``feeds show`` or ``crawls`` said why the feed never moved. Now the
moving feed is recorded as a duplicate of the other one (error kind ``duplicate``, naming it)
and is no longer crawled on its own; the feed it duplicates is untouched.
"""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

import sqlalchemy as sa
from aiohttp import web

from fairfetch.crawl import Crawler
from fairfetch.store import open_store
from fairfetch.store.tables import crawls
from fairfetch.testing import loopback_server
from fairfetch.views import feed_summary

from .conftest import add_old_and_new, loopback_settings

RSS = b"""<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>
<link>http://site.test/</link><description>d</description>
<item><title>a</title><guid>a</guid><link>http://site.test/a</link></item>
</channel></rss>"""


async def test_a_move_onto_another_feeds_url_is_recorded_and_stops_the_double_fetch(
    tmp_path: Path,
) -> None:
    hits: Counter[str] = Counter()

    async def handle(request: web.Request) -> web.StreamResponse:
        hits[request.path] += 1
        if request.path == "/robots.txt":
            return web.Response(status=404)
        if request.path == "/old.xml":
            raise web.HTTPMovedPermanently(location="/new.xml")
        return web.Response(body=RSS, content_type="application/rss+xml")

    store = open_store(f"sqlite:///{tmp_path}/dup.db")
    now = [datetime(2026, 11, 30, 12, 0, tzinfo=UTC)]
    async with loopback_server(handle) as port:
        settings = loopback_settings(store.url)
        a, b = add_old_and_new(store, port, now[0])
        old, new = a.url, b.url
        async with Crawler(store, settings, clock=lambda: now[0]) as crawler:
            for _ in range(2):  # the second crawl confirms the permanent redirect
                summary = await crawler.crawl_due()
                assert summary.due == summary.accounted == 2
                now[0] += timedelta(days=1, hours=1)  # past any interval: both due again
            assert hits["/old.xml"] == 2
            moved = store.get_feed(a.id)
            shown = feed_summary(moved)
            assert shown["url"] == old  # it did not (could not) move
            assert shown["status"] == "dead"
            assert shown["last_error"].startswith("duplicate: ")
            assert new in shown["last_error"]
            assert f"#{b.id}" in shown["last_error"]
            assert moved.next_crawl_at is None

            # From now on one fetch of the URL per round, not two.
            for _ in range(3):
                summary = await crawler.crawl_due()
                assert summary.due == summary.accounted == 1
                now[0] += timedelta(days=1, hours=1)
            assert hits["/old.xml"] == 2
    other = store.get_feed(b.id)
    assert (other.url, other.status, other.error_count) == (new, "ok", 0)
    with store.engine.connect() as conn:
        rows = conn.execute(
            sa.select(crawls.c.outcome, crawls.c.error_kind, crawls.c.error_detail)
            .where(crawls.c.feed_id == a.id)
            .order_by(crawls.c.id)
        ).all()
    store.close()
    assert [r.outcome for r in rows] == ["ok", "error"]
    assert rows[1].error_kind == "duplicate"
    assert new in rows[1].error_detail


async def test_adding_a_url_that_permanently_redirects_to_a_directory_feed_finds_that_feed(
    tmp_path: Path,
) -> None:
    # `feeds add` (and OPML import) of a feed's old address: the one GET it costs lands on a
    # feed the directory already has. It used to add a second feed for the same URL (which now
    # ends dead as a duplicate); it is that feed, reported as existing.
    async def handle(request: web.Request) -> web.StreamResponse:
        if request.path == "/robots.txt":
            return web.Response(status=404)
        if request.path == "/old.xml":
            raise web.HTTPMovedPermanently(location="/new.xml")
        if request.path == "/temp.xml":
            raise web.HTTPFound(location="/new.xml")
        return web.Response(body=RSS, content_type="application/rss+xml")

    store = open_store(f"sqlite:///{tmp_path}/dupadd.db")
    async with loopback_server(handle) as port:
        settings = loopback_settings(store.url)
        old = f"http://site.test:{port}/old.xml"
        new = f"http://site.test:{port}/new.xml"
        temp = f"http://site.test:{port}/temp.xml"
        async with Crawler(store, settings) as crawler:
            first = await crawler.add([new])
            assert first.added == [new]
            again = await crawler.add([old])
            assert again.added == []
            assert again.existing == [new]
            # A temporary redirect says nothing about where the feed lives: added as given.
            other = await crawler.add([temp])
            assert other.added == [temp]
    urls = sorted(f.url for f in store.list_feeds())
    store.close()
    assert urls == sorted([new, temp])
