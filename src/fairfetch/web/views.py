"""Shapes shared by the pages and the JSON API (one definition of what a feed looks like)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from fairfetch.store.records import FeedRecord
from fairfetch.store.sql import SqlStore

KINDS = ("podcast", "newsletter", "video", "blog")
STATUSES = ("new", "ok", "error", "dead")
#: URL path of each kind's listing.
KIND_PAGES = {
    "podcasts": "podcast",
    "newsletters": "newsletter",
    "videos": "video",
    "blogs": "blog",
}


def iso(value: datetime | None) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value is not None else None


def jsonable(value: Any) -> Any:
    """Datetimes as ISO 8601 UTC strings, recursively (the API's one time format)."""
    if isinstance(value, datetime):
        return iso(value)
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    return value


def feed_summary(row: dict[str, Any]) -> dict[str, Any]:
    keys = (
        "id",
        "url",
        "title",
        "description",
        "link",
        "kind",
        "status",
        "error_count",
        "last_error",
        "last_success_at",
        "last_fetched_at",
        "next_crawl_at",
        "entry_count",
        "newest_entry_at",
        "added_at",
    )
    return jsonable({k: row.get(k) for k in keys})


def websub_of(store: SqlStore, feed_id: int) -> dict[str, Any] | None:
    """The feed's WebSub subscription (hub, lease expiry) when the WebSub job is installed."""
    try:
        from fairfetch.websub.status import websub_summary
    except ImportError:
        return None
    try:
        return websub_summary(store, feed_id)
    except Exception as exc:  # another job's failure must not take the feed page down; say so
        return {"error": f"{type(exc).__name__}: {exc}"}


def feed_document(
    feed: FeedRecord, details: dict[str, Any], websub: dict[str, Any] | None = None
) -> dict[str, Any]:
    """What ``feeds show --json`` shows, plus the recent crawls (DESIGN.md's contract fields)."""
    return jsonable(
        {
            "id": feed.id,
            "url": feed.url,
            "original_url": feed.original_url,
            "title": feed.title,
            "description": feed.description,
            "link": feed.link,
            "language": feed.language,
            "format": feed.format,
            "generator": feed.generator,
            "kind": feed.kind,
            "kind_evidence": list(feed.kind_evidence),
            "categories": list(feed.categories),
            "backend": feed.backend,
            "politeness_key": feed.politeness_key,
            "status": feed.status,
            "error_count": feed.error_count,
            "last_error": feed.last_error,
            "last_success_at": feed.last_success_at,
            "last_fetched_at": feed.last_fetched_at,
            "next_crawl_at": feed.next_crawl_at,
            "added_at": feed.added_at,
            "etag": feed.etag,
            "last_modified": feed.last_modified,
            "redirects": details.get("redirects", []),
            "contacts": details.get("contacts", []),
            "authors": details.get("authors", []),
            "entry_count": feed.entry_count,
            "newest_entry_at": feed.newest_entry_at,
            "websub": {"hubs": list(feed.hub_urls), "self": feed.self_url, **(websub or {})},
            "crawls": details.get("crawls", []),
        }
    )


def entry_document(row: dict[str, Any]) -> dict[str, Any]:
    keys = (
        "id",
        "feed_id",
        "entry_id",
        "title",
        "link",
        "published",
        "updated",
        "summary",
        "content",
        "authors",
        "categories",
        "enclosures",
        "first_seen_at",
    )
    return jsonable({k: row.get(k) for k in keys})
