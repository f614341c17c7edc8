"""End to end: a publisher whose robots.txt keeps answering 5xx while its feed is fine.

Real HTTP on 127.0.0.1, a real SQLite store, the real crawler; only the clock is driven. Before
the fix every crawl was a `robots` failure and the 10th made the feed dead.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa
from aiohttp import web

from fairfetch.crawl import Crawler
from fairfetch.net.politeness import politeness_key
from fairfetch.store import SqlStore, open_store
from fairfetch.store.tables import crawls

from .conftest import make_fetcher, net_settings, serve

RSS = b"""<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>
<link>http://site.test/</link><description>d</description>
<item><title>a</title><guid>a</guid><link>http://site.test/a</link></item>
</channel></rss>"""


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqlStore]:
    s = open_store(f"sqlite:///{tmp_path}/robots5xx.db")
    yield s
    s.close()


async def test_a_feed_behind_a_robots_txt_answering_503_is_deferred_never_dead(
    store: SqlStore,
) -> None:
    state = {"robots": 503}

    async def robots(request: web.Request) -> web.Response:
        return web.Response(status=state["robots"], text="User-agent: *\nDisallow:\n")

    async def feed(request: web.Request) -> web.Response:
        return web.Response(body=RSS, content_type="application/rss+xml")

    now = [datetime(2026, 11, 30, 12, 0, tzinfo=UTC)]
    async with serve({"/robots.txt": robots, "/feed.xml": feed}) as srv:  # type: ignore[arg-type]
        url = srv.url("/feed.xml")
        settings = net_settings(db=store.url)
        fetcher = make_fetcher(settings)
        store.add_feed(url, now=now[0], politeness_key=politeness_key(url))
        try:
            async with Crawler(store, settings, fetcher=fetcher, clock=lambda: now[0]) as c:
                for _ in range(12):  # more than dead_after
                    fetcher.robots.invalidate()  # ask robots.txt every time
                    summary = await c.crawl_due()
                    assert summary.errors == {"robots_unreachable": 1}
                    f = store.get_feed(url)
                    assert f.status == "new"
                    assert f.error_count == 0
                    assert f.last_fetched_at is None
                    assert f.last_success_at is None
                    assert f.last_error is not None
                    assert f.last_error.startswith("robots_unreachable: robots.txt answered 503")
                    assert f.next_crawl_at is not None
                    assert f.next_crawl_at > now[0]
                    now[0] = f.next_crawl_at + timedelta(seconds=1)
                assert srv.hits["/feed.xml"] == 0  # complete disallow while it errors
                assert srv.hits["/robots.txt"] == 12
                state["robots"] = 200  # robots.txt is back: the feed is read at once
                fetcher.robots.invalidate()
                summary = await c.crawl_due()
        finally:
            await fetcher.aclose()
    assert summary.counts["ok"] == 1
    f = store.get_feed(url)
    assert (f.status, f.error_count) == ("ok", 0)
    with store.engine.connect() as conn:
        kinds = conn.execute(sa.select(crawls.c.error_kind).order_by(crawls.c.id)).scalars()
        assert list(kinds) == ["robots_unreachable"] * 12 + [None]
