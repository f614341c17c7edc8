"""Directory: listing indexes and full-text search over feed titles, URLs and author names.

SQLite: an FTS5 table ``feeds_fts`` (rowid = feed id) kept in sync by triggers on ``feeds`` and
``authors``, so every writer (the crawler, the CLI, a test) updates the search index in its own
transaction without knowing it exists. PostgreSQL: expression GIN indexes on ``tsvector``s of the
same text; nothing to keep in sync.

Revision ID: 0004_directory
Revises: 0001_core
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004_directory"
down_revision = "0001_core"
branch_labels = ("directory",)
depends_on = None

_LISTING = (
    ("ix_feeds_title_lower", "lower(title)"),
    ("ix_feeds_kind_title_lower", "kind, lower(title)"),
    ("ix_feeds_newest_entry_at", "newest_entry_at"),
    ("ix_feeds_kind_newest_entry_at", "kind, newest_entry_at"),
    ("ix_feeds_entry_count", "entry_count"),
    ("ix_feeds_kind_entry_count", "kind, entry_count"),
    ("ix_feeds_kind_id", "kind, id"),
    ("ix_feeds_status_error_count", "status, error_count"),
    # The queue figures (due now, due next hour) are counted from this index alone.
    ("ix_feeds_next_crawl_at_status", "next_crawl_at, status"),
)

# The text a feed is found by. URLs are split on punctuation on both backends so that a search
# for "example" finds https://blog.example.com/feed.
_SQLITE_PEOPLE = "(SELECT group_concat(name, ' ') FROM authors WHERE authors.feed_id = {ref}.id)"
_SQLITE = [
    "CREATE VIRTUAL TABLE feeds_fts USING fts5(title, url, people, "
    "tokenize = 'unicode61 remove_diacritics 2')",
    "INSERT INTO feeds_fts(rowid, title, url, people) SELECT id, coalesce(title, ''), "
    "url || ' ' || original_url, coalesce(" + _SQLITE_PEOPLE.format(ref="feeds") + ", '') "
    "FROM feeds",
    # Title weighs most, then author names, then the URL words.
    "INSERT INTO feeds_fts(feeds_fts, rank) VALUES ('rank', 'bm25(10.0, 1.0, 4.0)')",
    """CREATE TRIGGER feeds_fts_ai AFTER INSERT ON feeds BEGIN
         INSERT INTO feeds_fts(rowid, title, url, people)
         VALUES (NEW.id, coalesce(NEW.title, ''), NEW.url || ' ' || NEW.original_url, '');
       END""",
    """CREATE TRIGGER feeds_fts_au AFTER UPDATE OF title, url, original_url ON feeds BEGIN
         UPDATE feeds_fts SET title = coalesce(NEW.title, ''),
                              url = NEW.url || ' ' || NEW.original_url
         WHERE rowid = NEW.id;
       END""",
    """CREATE TRIGGER feeds_fts_ad AFTER DELETE ON feeds BEGIN
         DELETE FROM feeds_fts WHERE rowid = OLD.id;
       END""",
    """CREATE TRIGGER authors_fts_ai AFTER INSERT ON authors BEGIN
         UPDATE feeds_fts SET people = coalesce((SELECT group_concat(name, ' ') FROM authors
                                                 WHERE feed_id = NEW.feed_id), '')
         WHERE rowid = NEW.feed_id;
       END""",
    """CREATE TRIGGER authors_fts_ad AFTER DELETE ON authors BEGIN
         UPDATE feeds_fts SET people = coalesce((SELECT group_concat(name, ' ') FROM authors
                                                 WHERE feed_id = OLD.feed_id), '')
         WHERE rowid = OLD.feed_id;
       END""",
    """CREATE TRIGGER authors_fts_au AFTER UPDATE OF name, feed_id ON authors BEGIN
         UPDATE feeds_fts SET people = coalesce((SELECT group_concat(name, ' ') FROM authors
                                                 WHERE feed_id = NEW.feed_id), '')
         WHERE rowid = NEW.feed_id;
       END""",
]

#: Must match fairfetch.store.directory_repo exactly, or PostgreSQL will not use the index.
PG_FEED_DOCUMENT = (
    "to_tsvector('simple'::regconfig, coalesce(title, '') || ' ' || "
    "regexp_replace(url || ' ' || original_url, '[^[:alnum:]]+', ' ', 'g'))"
)
PG_AUTHOR_DOCUMENT = "to_tsvector('simple'::regconfig, name)"


def upgrade() -> None:
    for name, cols in _LISTING:
        op.execute(sa.text(f"CREATE INDEX {name} ON feeds ({cols})"))
    if op.get_bind().dialect.name == "sqlite":
        for stmt in _SQLITE:
            op.execute(sa.text(stmt))
    else:
        op.execute(sa.text(f"CREATE INDEX ix_feeds_search ON feeds USING gin ({PG_FEED_DOCUMENT})"))
        op.execute(
            sa.text(f"CREATE INDEX ix_authors_search ON authors USING gin ({PG_AUTHOR_DOCUMENT})")
        )


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        for trig in (
            "feeds_fts_ai",
            "feeds_fts_au",
            "feeds_fts_ad",
            "authors_fts_ai",
            "authors_fts_ad",
            "authors_fts_au",
        ):
            op.execute(sa.text(f"DROP TRIGGER IF EXISTS {trig}"))
        op.execute(sa.text("DROP TABLE IF EXISTS feeds_fts"))
    else:
        op.execute(sa.text("DROP INDEX IF EXISTS ix_authors_search"))
        op.execute(sa.text("DROP INDEX IF EXISTS ix_feeds_search"))
    for name, _cols in reversed(_LISTING):
        op.execute(sa.text(f"DROP INDEX IF EXISTS {name}"))
