"""Issue 2, "Politeness" and "What must be shown": 200 hostnames of one platform crawled at full
speed never exceed the per-key in-flight cap, and never more than one request to a host, as the
testbed measures it.

The storm test asserts the per-domain figure; its comment says "no single host more than one"
but nothing checks it. And it crawls every feed of the platform for the first time, in one pass:
a directory that grows (feeds added after the platform was fingerprinted) was not tried.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from fairfetch.crawl import Crawler, utcnow
from fairfetch.net.politeness import politeness_key
from fairfetch.store import open_store
from fairfetch.testing import running_testbed

CAP = 2


async def test_acceptance_storm_never_more_than_one_request_to_a_host(tmp_path: Path) -> None:
    async with running_testbed(seed=5, letterbox_rate=5.0, letterbox_burst=40) as tb:
        specs = tb.catalog(behaviours=["letterbox", "letterbox-custom"])
        assert len({s.host for s in specs}) >= 200
        store = open_store(f"sqlite:///{tmp_path}/storm.db")
        try:
            now = utcnow()
            for s in specs:
                store.add_feed(s.url, now=now, politeness_key=politeness_key(s.url))
            settings = tb.settings(db=store.url, per_key_in_flight=CAP, global_in_flight=64)
            async with Crawler(store, settings) as crawler:
                summary = await crawler.crawl_due()
            stats = await tb.stats()
        finally:
            store.close()
    assert summary.accounted == summary.due == len(specs)
    assert summary.counts["error"] == 0
    assert stats["platforms"]["letterbox"]["throttled"] > 0, "the storm must happen"
    hosts = stats["hosts"]
    assert len(hosts) > 1
    assert max(h["max_in_flight"] for h in hosts.values()) == 1
    assert stats["domains"]["letterbox.test"]["max_in_flight"] <= CAP


async def test_acceptance_a_growing_platform_never_exceeds_the_cap(tmp_path: Path) -> None:
    # No throttling here: the platform answers everything, so nothing pauses either key.
    async with running_testbed(
        seed=5, letterbox_rate=100_000.0, letterbox_burst=100_000, latency=0.01
    ) as tb:
        specs = tb.catalog(behaviours=["letterbox"])[:80]
        store = open_store(f"sqlite:///{tmp_path}/grow.db")
        try:
            now = utcnow()
            for s in specs[:30]:  # the directory as it was: crawled, fingerprinted
                store.add_feed(s.url, now=now, politeness_key=politeness_key(s.url))
            settings = tb.settings(db=store.url, per_key_in_flight=CAP, global_in_flight=64)
            async with Crawler(store, settings) as crawler:
                first = await crawler.crawl_due()
            assert first.counts["ok"] == 30
            for s in specs[30:]:  # the directory grows on the same platform
                store.add_feed(s.url, now=now, politeness_key=politeness_key(s.url))
            later = now + timedelta(days=2)
            store.set_due([f.id for f in store.iter_feeds()], later)
            tb.reset_stats()
            async with Crawler(store, settings, clock=lambda: later) as crawler:
                second = await crawler.crawl_due()
            stats = await tb.stats()
        finally:
            store.close()
    assert second.accounted == second.due == len(specs)
    assert second.counts["error"] == 0
    assert stats["domains"]["letterbox.test"]["max_in_flight"] <= CAP
    assert stats["platforms"]["letterbox"]["max_in_flight"] <= CAP
