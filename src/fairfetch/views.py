"""The public shape of a feed (``feeds show --json`` and the API): one place builds it."""

from __future__ import annotations

from typing import Any

from fairfetch.store import FeedRecord, SqlStore

#: ``websub`` always has these keys, so a reader can write ``show["websub"]["hub"]`` whether or
#: not the feed was ever subscribed (null: no hub advertised, or no subscription yet).
_NO_WEBSUB: dict[str, Any] = {
    "hub": None,
    "topic": None,
    "state": None,
    "lease_seconds": None,
    "lease_expires_at": None,
    "verified_at": None,
    "next_action_at": None,
    "denied_reason": None,
    "last_error": None,
    "subscribed_since": None,
}


def _websub(store: SqlStore, feed: FeedRecord) -> dict[str, Any]:
    summary: dict[str, Any] | None = None
    try:
        from fairfetch.websub.status import websub_summary
    except ImportError:
        pass
    else:
        summary = websub_summary(store, feed.id)
    if summary is None:
        return {**_NO_WEBSUB, "hub": feed.hub_urls[0] if feed.hub_urls else None}
    return {**_NO_WEBSUB, **summary}


def feed_summary(feed: FeedRecord) -> dict[str, Any]:
    return {
        "id": feed.id,
        "url": feed.url,
        "original_url": feed.original_url,
        "title": feed.title,
        "kind": feed.kind,
        "status": feed.status,
        "error_count": feed.error_count,
        "last_error": feed.last_error,
        "last_success_at": feed.last_success_at,
        "last_fetched_at": feed.last_fetched_at,
        "next_crawl_at": feed.next_crawl_at,
        "entry_count": feed.entry_count,
    }


def feed_details(store: SqlStore, feed: FeedRecord) -> dict[str, Any]:
    """Everything DESIGN.md's contract lists for ``feeds show``, and a little more."""
    return feed_document(feed, store.feed_details(feed.id), websub(store, feed))


def websub(store: SqlStore, feed: FeedRecord) -> dict[str, Any]:
    """The feed's WebSub state, always with the same keys (nulls when there is none)."""
    return _websub(store, feed)


def feed_document(
    feed: FeedRecord, details: dict[str, Any], websub_state: dict[str, Any]
) -> dict[str, Any]:
    """The one builder of a feed's public document (CLI ``feeds show --json`` and the API);
    ``details`` is :meth:`SqlStore.feed_details`."""
    out = feed_summary(feed)
    out.update(
        {
            "link": feed.link,
            "description": feed.description,
            "language": feed.language,
            "image_url": feed.image_url,
            "generator": feed.generator,
            "format": feed.format,
            "kind_evidence": list(feed.kind_evidence),
            "categories": list(feed.categories),
            "backend": feed.backend,
            "politeness_key": feed.politeness_key,
            "added_at": feed.added_at,
            "interval_seconds": feed.interval_seconds,
            "etag": feed.etag,
            "last_modified": feed.last_modified,
            "redirects": details.get("redirects", []),
            "redirect_candidate": feed.redirect_candidate,
            "contacts": details.get("contacts", []),
            "authors": details.get("authors", []),
            "hub_urls": list(feed.hub_urls),
            "self_url": feed.self_url,
            "newest_entry_at": feed.newest_entry_at,
            "websub": websub_state,
            "crawls": details.get("crawls", []),
            # The latest entries as stored, without their text: what the parser gave and the
            # crawler kept (authors, categories, enclosures), shown where the feed is.
            "recent_entries": details.get("recent_entries", []),
        }
    )
    return out
