"""End to end: a healthy feed whose robots.txt has answered 500 for more than 30 days.

Real HTTP on 127.0.0.1, a real SQLite store, the real crawler; only the clock is driven. Before
the fix the feed was never read again and, past the 30-day grace, every attempt counted as a
failure until it was ``dead``. RFC 9309 §2.3.1.4 lets a crawler treat a robots.txt undefined
for that long as unavailable (no rules): the feed is read again, and ``feeds show`` says why.
"""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

import sqlalchemy as sa
from aiohttp import web

from fairfetch.config import Settings
from fairfetch.crawl import Crawler
from fairfetch.crawl.health import ROBOTS_ABSENT_MARK
from fairfetch.net.fetch import Fetcher
from fairfetch.net.politeness import politeness_key
from fairfetch.net.robots import RobotsCache
from fairfetch.store import SqlStore, open_store
from fairfetch.store.tables import crawls
from fairfetch.testing import loopback_server
from fairfetch.views import feed_summary

from .conftest import loopback_settings

RSS = b"""<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>
<link>http://site.test/</link><description>d</description>
<item><title>a</title><guid>a</guid><link>http://site.test/a</link></item>
</channel></rss>"""

HEALTH = ("status", "error_count", "last_success_at", "last_fetched_at", "interval_seconds")


async def test_a_robots_txt_unreachable_past_the_grace_is_read_as_absent(tmp_path: Path) -> None:
    hits: Counter[str] = Counter()
    robots = {"status": 500}

    async def handle(request: web.Request) -> web.Response:
        hits[request.path] += 1
        if request.path == "/robots.txt":
            return web.Response(status=robots["status"], text="User-agent: *\nDisallow:\n")
        return web.Response(body=RSS, content_type="application/rss+xml")

    store = open_store(f"sqlite:///{tmp_path}/robots30.db")
    t0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
    now = [t0]
    async with loopback_server(handle) as port:
        settings = loopback_settings(store.url)
        url = f"http://site.test:{port}/feed.xml"
        store.add_feed(url, now=t0, politeness_key=politeness_key(url))
        async with Crawler(store, settings, clock=lambda: now[0]) as crawler:
            robots_cache = crawler.fetcher.robots

            async def crawl_at(when: datetime) -> None:
                now[0] = when
                robots_cache.invalidate()  # ask robots.txt again, as a new day would
                summary = await crawler.crawl_due()
                assert summary.due == summary.accounted == 1

            # Within the grace: deferred, never read, no health column moves.
            before = {k: getattr(store.get_feed(url), k) for k in HEALTH}
            for when in (t0, t0 + timedelta(days=10), t0 + timedelta(days=29, hours=23)):
                await crawl_at(when)
                f = store.get_feed(url)
                assert {k: getattr(f, k) for k in HEALTH} == before
                assert f.last_error is not None
                assert f.last_error.startswith("robots_unreachable: robots.txt answered 500")
            assert hits["/feed.xml"] == 0

            # Past the grace: read as if robots.txt were absent, and said so.
            await crawl_at(t0 + timedelta(days=30, hours=2))
            assert hits["/feed.xml"] == 1
            f = store.get_feed(url)
            shown = feed_summary(f)
            assert (shown["status"], shown["error_count"]) == ("ok", 0)
            assert shown["last_success_at"] == now[0]
            assert shown["last_error"].startswith("robots_unavailable: ")
            assert ROBOTS_ABSENT_MARK in shown["last_error"]
            assert store.count_entries(f.id) == 1

            # Still 500 an hour later (the read reset last_success_at): read again at once,
            # not deferred for another month.
            assert f.next_crawl_at is not None
            await crawl_at(f.next_crawl_at + timedelta(seconds=1))
            assert hits["/feed.xml"] == 2
            assert store.get_feed(url).status == "ok"

            # robots.txt answers again: its rules apply, and the note goes.
            robots["status"] = 200
            f = store.get_feed(url)
            assert f.next_crawl_at is not None
            await crawl_at(f.next_crawl_at + timedelta(seconds=1))
            assert hits["/feed.xml"] == 3
            f = store.get_feed(url)
            assert (f.status, f.error_count, f.last_error) == ("ok", 0, None)
    with store.engine.connect() as conn:
        rows = conn.execute(
            sa.select(crawls.c.outcome, crawls.c.error_kind, crawls.c.error_detail).order_by(
                crawls.c.id
            )
        ).all()
    store.close()
    assert [r.error_kind for r in rows[:3]] == ["robots_unreachable"] * 3
    # The crawls rows of the reads without robots.txt say so too.
    assert [r.outcome for r in rows[3:]] == ["ok", "ok", "ok"]
    assert all(ROBOTS_ABSENT_MARK in (r.error_detail or "") for r in rows[3:5])
    assert rows[5].error_detail is None


async def test_past_the_grace_the_last_good_copy_still_decides(tmp_path: Path) -> None:
    # robots.txt disallowed the feed, then went 500 for months: RFC 9309 lets us keep the
    # cached copy, and a directory operator expects it — the feed is never fetched.
    hits: Counter[str] = Counter()
    robots = {"status": 200}

    async def handle(request: web.Request) -> web.Response:
        if request.host.startswith("other.test"):
            # Another publisher, read normally: its robots.txt copies are saved each run,
            # and with them the store forgets copies past their keeping time.
            return web.Response(status=404 if request.path == "/robots.txt" else 200, body=RSS)
        hits[request.path] += 1
        if request.path == "/robots.txt":
            body = "User-agent: *\nDisallow: /feed.xml\n"
            return web.Response(status=robots["status"], text=body)
        return web.Response(body=RSS, content_type="application/rss+xml")

    store = open_store(f"sqlite:///{tmp_path}/robotscopy.db")
    t0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)  # as _cron_every_other_day's first day
    async with loopback_server(handle) as port:
        settings = loopback_settings(store.url)
        url = f"http://site.test:{port}/feed.xml"
        store.add_feed(url, now=t0, politeness_key=politeness_key(url))
        other = f"http://other.test:{port}/feed.xml"
        store.add_feed(other, now=t0, politeness_key=politeness_key(other))
        kinds = await _cron_every_other_day(store, settings, url, robots, 200)
    f = store.get_feed(url)
    store.close()
    assert hits["/feed.xml"] == 0
    assert hits["/robots.txt"] >= 10
    assert "robots_unreachable" not in kinds
    assert set(kinds) == {"robots"}
    assert f.last_error is not None
    assert ROBOTS_ABSENT_MARK not in f.last_error


async def test_an_old_good_copy_that_allows_the_feed_keeps_it_read(tmp_path: Path) -> None:
    # robots.txt allowed the feed, then went 500 for months. Up to 30 days the copy stands in;
    # past them it was dropped and the feed deferred for another 30 days (the grace counts from
    # the last read) before being read as if robots.txt were absent: a month unread, for rules
    # that allowed it all along. The last good copy decides, however old, both ways.
    hits: Counter[str] = Counter()
    robots = {"status": 200}

    async def handle(request: web.Request) -> web.Response:
        hits[request.path] += 1
        if request.path == "/robots.txt":
            return web.Response(status=robots["status"], text="User-agent: *\nDisallow: /x\n")
        return web.Response(body=RSS, content_type="application/rss+xml")

    store = open_store(f"sqlite:///{tmp_path}/robotsallow.db")
    t0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)  # as _cron_every_other_day's first day
    async with loopback_server(handle) as port:
        settings = loopback_settings(store.url)
        url = f"http://site.test:{port}/feed.xml"
        store.add_feed(url, now=t0, politeness_key=politeness_key(url))
        kinds = await _cron_every_other_day(store, settings, url, robots, 90)
    f = store.get_feed(url)
    store.close()
    assert len(kinds) == 45  # due on every run
    assert set(kinds) == {None}  # read every time: never deferred, never failed
    assert hits["/feed.xml"] == 45
    assert (f.status, f.error_count) == ("ok", 0)


async def _cron_every_other_day(
    store: SqlStore, settings: Settings, url: str, robots: dict[str, int], days: int
) -> list[str | None]:
    """Crawl every second day for ``days`` days, robots.txt answering 500 from day 2; the
    error kinds of ``url``'s crawls. A new process each time (cron), as in production: the
    robots.txt copy comes from the store, and it ages on the test's clock (copies are kept in
    wall-clock time)."""
    t0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
    now = [t0]
    kinds: list[str | None] = []
    for day in range(0, days, 2):
        if day == 2:
            robots["status"] = 500
        now[0] = t0 + timedelta(days=day)
        cache = RobotsCache(clock=lambda: now[0].timestamp(), wall=lambda: now[0].timestamp())
        fetcher = Fetcher(settings, robots=cache)
        try:
            async with Crawler(store, settings, fetcher=fetcher, clock=lambda: now[0]) as c:
                summary = await c.crawl_due()
                kinds.extend(r.error_kind for r in summary.results if r.url == url)
        finally:
            await fetcher.aclose()
    return kinds
