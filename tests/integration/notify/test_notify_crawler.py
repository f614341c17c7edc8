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


async def test_notify_crawler_hands_its_settings_to_the_outbox_hook(tmp_path):
    """The crawler's writer passes the settings it crawls with into the store's transaction, so
    hooks there (the outbox's newness limits) obey the config file, not only the environment."""
    from fairfetch.crawl import utcnow
    from fairfetch.store import hooks

    async with running_testbed(seed=3) as testbed:
        store = open_store(f"sqlite:///{tmp_path}/crawl.db")
        settings = testbed.settings(db=store.url, notify_max_age_days=2.0)
        [spec] = testbed.catalog(n=1, behaviours=["blog"])
        store.add_feed(spec.url, now=utcnow(), politeness_key=politeness_key(spec.url))
        seen: list[object] = []

        def spy(_conn, _feed_id, _ids, _now, _first, given) -> None:  # type: ignore[no-untyped-def]
            seen.append(given)

        hooks.register_new_entries_hook(spy)
        try:
            async with Crawler(store, settings) as crawler:
                await crawler.crawl_due()
        finally:
            hooks.unregister_new_entries_hook(spy)
            store.close()
    assert seen
    assert all(given is settings for given in seen)
