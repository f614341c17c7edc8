"""A new crawl process reads robots.txt from the store instead of asking every host again."""

from __future__ import annotations

from urllib.parse import urlsplit

import sqlalchemy as sa

from fairfetch.config import Settings
from fairfetch.crawl import Crawler, utcnow
from fairfetch.crawl.robots_store import StoreRobotsBacking
from fairfetch.net.politeness import politeness_key
from fairfetch.net.robots import RobotsCopy
from fairfetch.store import SqlStore
from fairfetch.store.robots_repo import save_robots
from fairfetch.store.tables_robots import robots_txt
from fairfetch.testing import Testbed


async def test_second_process_sends_only_the_feed_requests(
    testbed: Testbed, store: SqlStore, settings: Settings
) -> None:
    specs = testbed.catalog(n=6, behaviours=["blog"])
    hosts = {urlsplit(s.url).hostname for s in specs}
    for s in specs:
        store.add_feed(s.url, now=utcnow(), politeness_key=politeness_key(s.url))
    assert settings.obey_robots

    async with Crawler(store, settings) as first:  # one process...
        assert (await first.crawl_due()).counts["ok"] == 6
    assert (await testbed.stats())["total"]["requests"] == len(specs) + len(hosts)
    with store.engine.connect() as conn:
        stored = conn.execute(sa.select(sa.func.count()).select_from(robots_txt)).scalar_one()
    assert stored == len(hosts)

    testbed.reset_stats()
    store.set_due([store.get_feed(s.url).id for s in specs], store.get_feed(specs[0].url).added_at)
    async with Crawler(store, settings) as second:  # ...and the next run: a fresh fetcher
        summary = await second.crawl_due()
    assert summary.counts["not_modified"] == 6
    total = (await testbed.stats())["total"]
    assert total["requests"] == len(specs)  # no robots.txt request this time
    assert total["conditional_hits"] == len(specs)


async def test_prefetched_copies_are_served_without_another_read(store: SqlStore) -> None:
    backing = StoreRobotsBacking(store)
    copy = RobotsCopy("http://a.test:80", "parsed", 200, "Disallow: /x", 1.8e9)
    save_robots(store, [copy])
    await backing.prefetch(["http://a.test:80", "http://absent.test:80"])
    with store.engine.begin() as conn:
        conn.execute(robots_txt.delete())  # what was prefetched no longer needs the table
    assert await backing.load("http://a.test:80") == copy
    assert await backing.load("http://absent.test:80") is None
    save_robots(store, [copy])
    assert await backing.load("http://a.test:80") == copy  # asked once: the next is a read
