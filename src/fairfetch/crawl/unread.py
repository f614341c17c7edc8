"""Feeds added but never asked for: what `feeds add SITE` and the web's add crawl at once.

A site's page declares feeds; the add's one GET was the page, so those feeds are added unread.
Left for the next pass, `feeds add SITE` printed "added" for a feed with no title, kind or
health, and a dead link on the page looked healthy. One rule for the CLI and the web, here.
"""

from __future__ import annotations

from fairfetch.crawl.results import AddReport
from fairfetch.store.records import FeedRecord
from fairfetch.store.sql import SqlStore

__all__ = ["awaits_first_fetch", "declared_unread"]


def awaits_first_fetch(store: SqlStore, feed: FeedRecord) -> bool:
    """Whether ``feed`` was never asked for. A throttled feed is "new" too, but it was asked
    once already: asking again at once would ignore the publisher's Retry-After."""
    return feed.status == "new" and not store.feed_details(feed.id, crawl_limit=1)["crawls"]


def declared_unread(store: SqlStore, report: AddReport) -> list[int]:
    """The ids of the feeds ``report`` added from a site page's declarations, never fetched."""
    declared = {link for links in report.discovered.values() for link in links}
    ids = []
    for url in report.added:
        if url not in declared:
            continue
        feed = store.find_feed(url)
        if feed is not None and awaits_first_fetch(store, feed):
            ids.append(feed.id)
    return ids
