"""Storage: SQLAlchemy Core tables, Alembic migrations and narrow repositories.

One implementation (:class:`SqlStore`) serves SQLite and PostgreSQL; the contract tests in
``tests/unit/store`` run on both.
"""

from __future__ import annotations

from fairfetch.store.batch_write import link_row
from fairfetch.store.records import CrawlWrite, FeedRecord, WriteResult, feed_key
from fairfetch.store.sql import SqlStore, dumps


def open_store(url: str) -> SqlStore:
    """Open (and create or migrate on first use) the store at ``url``."""
    return SqlStore(url)


__all__ = [
    "CrawlWrite",
    "FeedRecord",
    "SqlStore",
    "WriteResult",
    "dumps",
    "feed_key",
    "link_row",
    "open_store",
]

# Registers the notification outbox as a new-entries hook, so that every store — whoever opens
# it — writes notifications in the same transaction as the entries that cause them.
import fairfetch.store.notify_repo  # noqa: E402, F401
