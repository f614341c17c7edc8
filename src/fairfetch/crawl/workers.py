"""What the crawler's worker processes run.

Kept apart from the crawl loop so that a worker imports only what it needs (the parser, the
store), not the HTTP client and the rest of the loop: each worker starts faster and smaller.
"""

from __future__ import annotations

from fairfetch.config import Settings
from fairfetch.store import CrawlWrite, SqlStore, WriteResult

_STORES: dict[str, SqlStore] = {}


def shareable(url: str) -> bool:
    """A database another process can open too (not an in-memory SQLite)."""
    return not (url.startswith("sqlite") and (":memory:" in url or url.rstrip("/") == "sqlite:"))


def warm_up(url: str | None) -> None:
    """Import (and for the writer, open the store) before the first real task arrives."""
    # Unpickled with every write: imported here, not on the first batch.
    import fairfetch.crawl.redecide
    import fairfetch.feeds.parse  # noqa: F401

    if url is not None and url not in _STORES:
        _STORES[url] = SqlStore(url, migrate_schema=False)


def write_in_child(
    url: str, batch: list[CrawlWrite], settings: Settings | None = None
) -> list[WriteResult]:
    """Runs in the writer process: one store per process, schema already migrated."""
    store = _STORES.get(url)
    if store is None:
        store = _STORES[url] = SqlStore(url, migrate_schema=False)
    return store.write(batch, settings)
