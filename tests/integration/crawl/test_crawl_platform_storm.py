"""A newsletter platform of 240 hostnames on one backend, rate-limited: crawled at full speed,
it never sees more than the per-key cap in flight, and a 429 storm leaves zero feeds in error."""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa

from fairfetch.crawl import Crawler, utcnow
from fairfetch.net.politeness import politeness_key
from fairfetch.store import open_store
from fairfetch.store.tables import crawls
from fairfetch.testing import running_testbed


async def test_letterbox_storm(tmp_path: Path) -> None:
    async with running_testbed(seed=5, letterbox_rate=5.0, letterbox_burst=40) as tb:
        specs = tb.catalog(behaviours=["letterbox", "letterbox-custom"])
        assert len(specs) >= 200
        store = open_store(f"sqlite:///{tmp_path}/storm.db")
        now = utcnow()
        for s in specs:
            store.add_feed(s.url, now=now, politeness_key=politeness_key(s.url))
        before = {f.id: f for f in store.iter_feeds()}
        settings = tb.settings(db=store.url, per_key_in_flight=2, global_in_flight=64)

        async with Crawler(store, settings) as crawler:
            summary = await crawler.crawl_due()

        stats = await tb.stats()
        # Politeness, measured by the server: the platform's own domain never had more than the
        # per-key cap in flight, and no single host more than one.
        assert stats["domains"]["letterbox.test"]["max_in_flight"] <= 2
        assert all(d["max_in_flight"] <= 2 for d in stats["domains"].values())
        assert max(h["max_in_flight"] for h in stats["hosts"].values()) == 1
        # The measure can see overlap: the key's cap was reached (a meter stuck at 1, as the
        # testbed's was, would pass the caps above whatever the crawler did).
        assert stats["domains"]["letterbox.test"]["max_in_flight"] == 2
        assert stats["platforms"]["letterbox"]["throttled"] > 0, "the storm must happen"

        # Every feed accounted for; throttles and deferrals are not failures.
        assert summary.accounted == summary.due == len(specs)
        assert summary.counts["error"] == 0, (dict(summary.errors), dict(summary.skipped))
        assert summary.counts["throttled"] > 0
        feeds = {f.id: f for f in store.iter_feeds()}
        assert [f.url for f in feeds.values() if f.status == "error"] == []

        with store.engine.connect() as conn:
            throttled = {
                r.feed_id
                for r in conn.execute(
                    sa.select(crawls.c.feed_id).where(crawls.c.outcome == "throttled")
                )
            }
        for fid in throttled:
            old, new = before[fid], feeds[fid]
            for column in (
                "status",
                "error_count",
                "last_error",
                "last_success_at",
                "last_fetched_at",
            ):
                assert getattr(new, column) == getattr(old, column), column
            assert new.next_crawl_at is not None
            assert new.next_crawl_at > now

        # Deferred feeds were not fetched and wait for the key to reopen.
        deferred = summary.skipped.get("deferred (key paused)", 0)
        waiting = [f for f in feeds.values() if f.status == "new" and f.id not in throttled]
        assert len(waiting) == deferred
        assert all(f.next_crawl_at is not None and f.next_crawl_at > now for f in waiting)

        # Feeds that answered are now known to be on one backend, custom domains included.
        crawled = [f for f in feeds.values() if f.status == "ok"]
        assert crawled
        assert {f.politeness_key for f in crawled} == {"backend:letterbox"}
        store.close()
