"""Review of 18b5f36 (crawl/urls.normalize_feed_url drops the scheme's own port).

Before it, ``feeds add http://site.test:80/feed`` stored the URL with ':80' (as this test's
store holds it). Now the same command normalises it to 'http://site.test/feed', which
Crawler._add_one looks up (url or original_url) and does not find: it adds a second feed for
the one URL, crawled twice, and its readers are on the first: the duplicate the commit set out
to prevent, made by the upgrade for every feed stored with its default port. Nothing rewrites
the stored URLs (no migration) and the add does not look the given spelling up.

No request leaves: site.test resolves to 127.0.0.2, which the perimeter refuses."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from fairfetch.config import Settings
from fairfetch.crawl import Crawler, utcnow
from fairfetch.store import open_store

STORED = "http://site.test:80/feed"  # as normalize_feed_url kept it before 18b5f36


async def test_review_a_feed_stored_with_its_default_port_is_not_added_again(
    tmp_path: Path,
) -> None:
    store = open_store(f"sqlite:///{tmp_path}/crawl.db")
    try:
        store.add_feed(STORED, now=utcnow() - timedelta(days=1), politeness_key="site.test")
        settings = Settings(db=store.url, allow_networks=("127.0.0.1/32",),
                            resolve=("site.test:127.0.0.2",))
        async with Crawler(store, settings) as crawler:
            report = await crawler.add([STORED])
        assert report.added == []
        assert [f.url for f in store.list_feeds()] == [STORED]
    finally:
        store.close()
