"""With the real crawler against the simulated web: a feed's first crawl notifies nobody, the
entries it gains later are mailed once, through the outbox written in the crawl's transaction."""

from __future__ import annotations

from fairfetch.crawl import Crawler
from fairfetch.net.politeness import politeness_key
from fairfetch.notify.service import send_due
from fairfetch.store import notify_repo as repo
from fairfetch.store import open_store
from fairfetch.testing import running_testbed

from .conftest import FAST, World


async def test_notify_real_crawler_new_items_are_mailed_once(tmp_path, smtp_server):
    async with running_testbed(seed=3) as testbed:
        store = open_store(f"sqlite:///{tmp_path}/crawl.db")
        settings = testbed.settings(db=store.url, smtp_url=smtp_server.url,
                                    public_url="https://news.example.test")
        w = World(store, settings)
        [spec] = testbed.catalog(n=1, behaviours=["growing"])
        from fairfetch.crawl import utcnow

        feed, _ = store.add_feed(spec.url, now=utcnow(), politeness_key=politeness_key(spec.url))
        w.subscribe("ana@example.test", feed.id, at=utcnow())
        async with Crawler(store, settings) as crawler:
            await crawler.crawl_due()  # first crawl: the backlog
            backlog = store.get_feed(feed.id).entry_count
            assert backlog > 0
            assert [r for r in w.outbox() if r["kind"] == "item"] == []
            assert spec.period is not None
            testbed.clock.advance(spec.period * 3)
            await crawler.refresh([feed.id])
            await crawler.refresh([feed.id])  # nothing new the second time
        gained = store.get_feed(feed.id).entry_count - backlog
        assert gained >= 2
        items = [r for r in w.outbox() if r["kind"] == "item"]
        assert len(items) == gained
        report = await send_due(store, settings, options=FAST)
        assert report.sent == gained
        assert len({m.msg["Message-ID"] for m in smtp_server.accepted}) == gained
        assert all(r["status"] == "sent" for r in w.outbox() if r["kind"] == "item")
        assert repo.count_pending(store).get("pending", 0) == 0
        store.close()
