"""Shapes shared by the pages and the JSON API (one definition of what a feed looks like)."""

from __future__ import annotations

import dataclasses
import re
from datetime import datetime
from typing import Any

from fairfetch.errors import InvalidURLError
from fairfetch.store.directory_repo import Page
from fairfetch.store.records import FeedRecord
from fairfetch.store.sql import SqlStore
from fairfetch.views import feed_document as shared_feed_document

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


#: A search that is one http(s) address and nothing else.
_ONE_URL = re.compile(r"(?i)https?://\S+")

#: Characters a search for words may hold.
QUERY_MAX = 200
#: ... and a search that is a feed's URL, which finds that feed: feeds are added up to 2,048
#: characters, and a private podcast's token or a news search's query string runs past 200.
URL_QUERY_MAX = 2048


def query_too_long(q: str) -> dict[str, Any]:
    """The problem of a search over :data:`QUERY_MAX` characters that is no feed's URL, shaped
    as FastAPI's own (the 422 names ``q``)."""
    return {
        "type": "string_too_long",
        "loc": ("query", "q"),
        "msg": f"String should have at most {QUERY_MAX} characters "
        "(unless it is the URL of a feed in the directory)",
        "input": q,
    }


def feed_by_url(
    store: SqlStore,
    q: str,
    *,
    kind: str | None = None,
    status: str | None = None,
    offset: int = 0,
) -> Page | None:
    """The feed whose URL, now or as it was added, is the whole search, as a one-row result;
    None when the search is no such URL (then it is a search for words).

    People paste a feed's address to ask whether the directory has it; split into words, a
    YouTube channel feed's is ten ('https www youtube com feeds videos xml channel id uc…'),
    past the word limit, so the search refused the address of a feed it holds.
    """
    from fairfetch.crawl.urls import normalize_feed_url

    text = q.strip()
    if not _ONE_URL.fullmatch(text):
        return None
    keys = [text]
    try:
        keys.append(normalize_feed_url(text))
    except InvalidURLError:
        pass
    feed = next((f for f in map(store.find_feed, dict.fromkeys(keys)) if f is not None), None)
    if feed is None:
        return None
    if (kind and feed.kind != kind) or (status and feed.status != status):
        return Page([], 0)
    row = {f.name: getattr(feed, f.name) for f in dataclasses.fields(feed)}
    return Page([row] if offset == 0 else [], 1)


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
    feed: FeedRecord,
    details: dict[str, Any],
    websub: dict[str, Any] | None = None,
    duplicate_of: int | None = None,
) -> dict[str, Any]:
    """What ``feeds show --json`` shows (built by :mod:`fairfetch.views`), JSON-ready.

    ``duplicate_of`` (the feed this one was folded into) is added here as the CLI adds it:
    the API promises every field of ``feeds show --json``."""
    state = websub if websub is not None else {}
    out = shared_feed_document(feed, details, state)
    out["duplicate_of"] = duplicate_of
    return jsonable(out)


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
