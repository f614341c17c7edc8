"""What the crawler reads off a fetch and a stored feed: pure conversions, no I/O.

The publisher's own refresh hints (``ttl`` in the feed, ``Cache-Control: max-age``), whether every
redirect hop was permanent (the feed may move), the stored row as the health decision's state,
and the feed's descriptive columns as a fetch found them.
"""

from __future__ import annotations

import re
from typing import Any

from fairfetch.crawl.health import FeedState
from fairfetch.feeds.model import Feed
from fairfetch.net.backends import detect_backend
from fairfetch.net.outcome import FetchResult
from fairfetch.net.politeness_keys import politeness_key
from fairfetch.store import FeedRecord

__all__ = ["feed_state", "hint_seconds", "metadata_changes", "permanent_target"]

_MAX_AGE = re.compile(r"max-age\s*=\s*(\d+)", re.I)


def hint_seconds(parsed: Feed, headers: Any) -> float | None:
    hints = []
    if parsed.ttl_hint:
        hints.append(parsed.ttl_hint)
    m = _MAX_AGE.search(headers.get("cache-control", "") if headers else "")
    if m:
        hints.append(float(m.group(1)))
    return max(hints) if hints else None


def permanent_target(result: FetchResult) -> str | None:
    if result.hops and all(h.status in (301, 308) for h in result.hops):
        return result.final_url
    return None


def feed_state(feed: FeedRecord) -> FeedState:
    return FeedState(
        url=feed.url,
        status=feed.status,
        error_count=feed.error_count,
        last_error=feed.last_error,
        last_success_at=feed.last_success_at,
        last_fetched_at=feed.last_fetched_at,
        next_crawl_at=feed.next_crawl_at,
        interval_seconds=feed.interval_seconds,
        redirect_candidate=feed.redirect_candidate,
        redirect_candidate_count=feed.redirect_candidate_count,
        added_at=feed.added_at,
        newest_entry_at=feed.newest_entry_at,
    )


def metadata_changes(feed: FeedRecord, parsed: Feed, result: FetchResult) -> dict[str, Any]:
    """The feed row's descriptive columns as this fetch found them, and a new politeness key
    when the response names a backend the feed was not known to be on."""
    backend = detect_backend(result.headers, parsed.generator)
    changes: dict[str, Any] = {
        "title": parsed.title,
        "link": parsed.link,
        "description": parsed.description,
        "language": parsed.language,
        "image_url": parsed.image_url,
        "generator": parsed.generator,
        "format": parsed.format,
        "kind": parsed.kind,
        "kind_evidence": list(parsed.kind_evidence),
        "categories": list(parsed.categories),
        "hub_urls": list(parsed.hub_urls),
        "self_url": parsed.self_url,
        "etag": result.headers.get("etag"),
        "last_modified": result.headers.get("last-modified"),
    }
    if backend and backend != feed.backend:
        changes["backend"] = backend
        changes["politeness_key"] = politeness_key(feed.url, backend)
    return changes
