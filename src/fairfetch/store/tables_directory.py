"""What the directory (web) adds to the schema: listing indexes and the search index.

The listing indexes live on the shared metadata so the schema test sees them. The SQLite search
table (FTS5) is a virtual table, which neither SQLAlchemy's metadata nor PostgreSQL can create; it
is declared here as a plain table clause for queries only and created by migration 0004. On
PostgreSQL search uses expression GIN indexes instead (also created there), so no table is needed.
"""

from __future__ import annotations

import sqlalchemy as sa

from fairfetch.store.tables import feeds

#: The SQLite FTS5 table, kept in sync with ``feeds`` and ``authors`` by triggers (migration 0004).
#: ``rowid`` is the feed id; ``people`` holds the feed's author names.
feeds_fts = sa.table(
    "feeds_fts",
    sa.column("rowid", sa.Integer),
    sa.column("title", sa.Text),
    sa.column("url", sa.Text),
    sa.column("people", sa.Text),
)

#: Directory listings are sorted by these; each sort has an index alone (/feeds) and behind
#: ``kind`` (/podcasts, /blogs, …) so a page is an index range, not a sort of the whole table.
LISTING_INDEXES = (
    sa.Index("ix_feeds_title_lower", sa.func.lower(feeds.c.title)),
    sa.Index("ix_feeds_kind_title_lower", feeds.c.kind, sa.func.lower(feeds.c.title)),
    sa.Index("ix_feeds_newest_entry_at", feeds.c.newest_entry_at),
    sa.Index("ix_feeds_kind_newest_entry_at", feeds.c.kind, feeds.c.newest_entry_at),
    sa.Index("ix_feeds_entry_count", feeds.c.entry_count),
    sa.Index("ix_feeds_kind_entry_count", feeds.c.kind, feeds.c.entry_count),
    sa.Index("ix_feeds_kind_id", feeds.c.kind, feeds.c.id),
    sa.Index("ix_feeds_status_error_count", feeds.c.status, feeds.c.error_count),
    sa.Index("ix_feeds_next_crawl_at_status", feeds.c.next_crawl_at, feeds.c.status),
)

__all__ = ["LISTING_INDEXES", "feeds_fts"]
