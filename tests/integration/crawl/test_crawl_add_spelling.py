"""A feed added under an unusual spelling of its URL (upper-case scheme and host) keeps the
normal spelling as the URL it was given: once it moves (a confirmed 301), looking it up or
adding it again under the normal spelling finds it. The raw spelling was stored, so a second
``feeds add`` of the same feed created a duplicate."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from fairfetch.config import Settings
from fairfetch.crawl.loop import Crawler
from fairfetch.store import SqlStore
from fairfetch.testing import Testbed


def _shouted(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme.upper(), parts.netloc.upper(), parts.path, parts.query, ""))


async def test_crawl_a_moved_feed_added_with_odd_spelling_is_not_added_twice(
    testbed: Testbed, store: SqlStore, settings: Settings
) -> None:
    [spec] = testbed.catalog(n=1, behaviours=["redirect-301"])
    async with Crawler(store, settings) as c:
        first = await c.add([_shouted(spec.url)])
        assert first.added == [spec.url]
        await c.refresh([spec.url])  # the second 301 confirms the move
        moved = store.get_feed(spec.url)
        assert moved.url == spec.final_url
        assert moved.original_url == spec.url
        again = await c.add([spec.url])
    assert again.added == []
    assert again.existing == [spec.final_url]
    assert len(store.list_feeds()) == 1
