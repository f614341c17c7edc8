"""Writing actions behind the admin token: add (discovery + first crawl), refresh, delete.

They go through the crawler so that the web can never fetch around the politeness slots: the
running crawler when the app has one (``fairfetch run``), else a one-off Crawler.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from fairfetch.config import Settings
from fairfetch.crawl.unread import awaits_first_fetch
from fairfetch.errors import InvalidURLError
from fairfetch.store.records import FeedRecord
from fairfetch.store.sql import SqlStore


@dataclass
class AddOutcome:
    """What adding one URL did; ``feed`` is the feed it led to, if any."""

    url: str
    feed: FeedRecord | None
    created: bool
    problem: str | None = None
    discovered: list[str] = field(default_factory=list)


async def add_feed(
    store: SqlStore,
    settings: Settings,
    crawler: Any,
    url: str,
    *,
    turns: asyncio.Lock | None = None,
) -> AddOutcome:
    """Add ``url`` (discovery, then the first crawl). Without a running crawler, ``turns``
    makes the app's one-off crawls take turns (see :func:`refresh_feed`)."""
    if crawler is None and turns is not None:
        async with turns:
            return await add_feed(store, settings, None, url)
    from fairfetch.crawl import add_feeds
    from fairfetch.crawl.urls import normalize_feed_url

    try:
        normalized = normalize_feed_url(url)
    except InvalidURLError as exc:
        return AddOutcome(url, None, False, problem=exc.reason)
    if crawler is not None and hasattr(crawler, "add"):
        report = await crawler.add([url])
    else:
        report = await add_feeds(store, settings, [url])
    discovered = list(report.discovered.get(normalized, []))
    if report.invalid:
        return AddOutcome(url, None, False, problem=report.invalid[0][1], discovered=discovered)
    created = bool(report.added)
    target = (report.added or report.existing or [None])[0]
    feed = await asyncio.to_thread(store.find_feed, target) if target else None
    if feed is None and report.failed:
        return AddOutcome(url, None, False, problem=report.failed[0][1], discovered=discovered)
    if feed is None:
        return AddOutcome(url, None, False, problem="no feed was added", discovered=discovered)
    problem = report.failed[0][1] if report.failed else None
    if await asyncio.to_thread(awaits_first_fetch, store, feed):
        # Discovered from a site page: added but not fetched yet. Crawl it now so the person who
        # added it sees a crawled feed, not an empty one.
        await refresh_feed(store, settings, crawler, feed.id)
        feed = await asyncio.to_thread(store.find_feed, feed.id) or feed
    return AddOutcome(url, feed, created, problem=problem, discovered=discovered)


async def refresh_feed(
    store: SqlStore,
    settings: Settings,
    crawler: Any,
    feed_id: int,
    *,
    turns: asyncio.Lock | None = None,
) -> Any:
    """Crawl one feed now; returns the crawler's summary.

    Without a running crawler (``fairfetch serve``) each crawl is a one-off Crawler, whose
    politeness slots know nothing of another's: two at once (a double-click, an API client
    with requests in flight) sent one host several requests at once. ``turns``, one lock per
    app, makes them take turns.
    """
    if crawler is not None:
        return await crawler.refresh([feed_id])
    if turns is not None:
        async with turns:
            return await refresh_feed(store, settings, None, feed_id)
    from fairfetch.crawl import Crawler

    one_off = Crawler(store, settings)
    try:
        return await one_off.refresh([feed_id])
    finally:
        await one_off.aclose()
