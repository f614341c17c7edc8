"""The core tables (feeds, entries, crawls, redirects, authors, links, outages).

Other jobs keep their tables in ``tables_<job>.py`` on the same ``metadata``. The Alembic
migrations in ``migrations/versions`` are the source of truth for the schema; these Table objects
are how the code names it, and ``tests/unit/store`` checks the two agree.
"""

from __future__ import annotations

import sqlalchemy as sa

from fairfetch.store.types import (
    AUTHOR_KEY_BYTES,
    TITLE_KEY_BYTES,
    BindableText,
    KeyText,
    UTCDateTime,
)

#: A 64-bit id on PostgreSQL for the rows spent by every crawl (migration 0012); SQLite's row
#: ids are 64-bit already, and its INTEGER PRIMARY KEY must stay one to be the row id.
WIDE_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")

metadata = sa.MetaData(
    naming_convention={
        "ix": "ix_%(table_name)s_%(column_0_N_name)s",
        "uq": "uq_%(table_name)s_%(column_0_N_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)

feeds = sa.Table(
    "feeds",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("url", BindableText, nullable=False, unique=True),
    sa.Column("original_url", BindableText, nullable=False, index=True),
    sa.Column("title", KeyText(TITLE_KEY_BYTES)),  # in the listing index lower(title)
    sa.Column("link", BindableText),
    sa.Column("description", BindableText),
    sa.Column("language", BindableText),
    sa.Column("image_url", BindableText),
    sa.Column("generator", BindableText),
    sa.Column("format", BindableText),
    sa.Column("kind", BindableText),
    sa.Column("kind_evidence", sa.JSON, nullable=False, server_default="[]"),
    sa.Column("categories", sa.JSON, nullable=False, server_default="[]"),
    sa.Column("backend", BindableText),
    sa.Column("politeness_key", BindableText, nullable=False, index=True),
    sa.Column("status", BindableText, nullable=False, server_default="new"),
    sa.Column("error_count", sa.Integer, nullable=False, server_default="0"),
    sa.Column("last_error", BindableText),
    sa.Column("last_success_at", UTCDateTime),
    sa.Column("last_fetched_at", UTCDateTime),
    sa.Column("next_crawl_at", UTCDateTime, index=True),
    sa.Column("added_at", UTCDateTime, nullable=False),
    sa.Column("etag", BindableText),
    sa.Column("last_modified", BindableText),
    sa.Column("interval_seconds", sa.Float),
    sa.Column("redirect_candidate", BindableText),
    sa.Column("redirect_candidate_count", sa.Integer, nullable=False, server_default="0"),
    sa.Column("hub_urls", sa.JSON, nullable=False, server_default="[]"),
    sa.Column("self_url", BindableText),
    sa.Column("entry_count", sa.Integer, nullable=False, server_default="0"),
    sa.Column("newest_entry_at", UTCDateTime),
    sa.Column("crawl_count", sa.Integer, nullable=False, server_default="0"),
    #: the feed this one duplicates (its confirmed move landed on that feed's URL); its readers
    #: are moved there (see fairfetch.store.notify_subscriptions.follow_duplicates)
    sa.Column(
        "duplicate_of",
        sa.Integer,
        sa.ForeignKey("feeds.id", ondelete="SET NULL"),
        index=True,
    ),
)

entries = sa.Table(
    "entries",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("feed_id", sa.Integer, sa.ForeignKey("feeds.id", ondelete="CASCADE"), nullable=False),
    sa.Column("entry_id", KeyText(), nullable=False),
    sa.Column("title", BindableText),
    sa.Column("link", BindableText),
    sa.Column("published", UTCDateTime),
    sa.Column("updated", UTCDateTime),
    sa.Column("summary", BindableText),
    sa.Column("content", BindableText),
    sa.Column("authors", sa.JSON, nullable=False, server_default="[]"),
    sa.Column("categories", sa.JSON, nullable=False, server_default="[]"),
    sa.Column("enclosures", sa.JSON, nullable=False, server_default="[]"),
    sa.Column("image_url", BindableText),
    sa.Column("content_hash", BindableText, nullable=False, server_default=""),
    sa.Column("first_seen_at", UTCDateTime, nullable=False),
    sa.Column("last_seen_at", UTCDateTime, nullable=False),
    sa.UniqueConstraint("feed_id", "entry_id"),
    sa.Index("ix_entries_feed_id_first_seen_at", "feed_id", "first_seen_at"),
)

crawls = sa.Table(
    "crawls",
    metadata,
    sa.Column("id", WIDE_ID, primary_key=True, autoincrement=True),
    sa.Column("feed_id", sa.Integer, sa.ForeignKey("feeds.id", ondelete="CASCADE")),
    sa.Column("url", BindableText, nullable=False),
    sa.Column("at", UTCDateTime, nullable=False, index=True),
    #: ok | not_modified | throttled | error | outage | skipped
    sa.Column("outcome", BindableText, nullable=False),
    sa.Column("http_status", sa.Integer),
    sa.Column("error_kind", BindableText),
    sa.Column("error_detail", BindableText),
    sa.Column("bytes", sa.Integer, nullable=False, server_default="0"),
    sa.Column("duration", sa.Float, nullable=False, server_default="0"),
    sa.Column("politeness_key", BindableText, nullable=False, server_default=""),
    sa.Column("new_entries", sa.Integer, nullable=False, server_default="0"),
    #: poll | refresh | ping | probe
    sa.Column("trigger", BindableText, nullable=False, server_default="poll"),
    sa.Index("ix_crawls_feed_id_at", "feed_id", "at"),
)

redirects = sa.Table(
    "redirects",
    metadata,
    sa.Column("id", WIDE_ID, primary_key=True, autoincrement=True),
    sa.Column("feed_id", sa.Integer, sa.ForeignKey("feeds.id", ondelete="CASCADE"), nullable=False),
    sa.Column("hop", sa.Integer, nullable=False),
    sa.Column("url", BindableText, nullable=False),
    sa.Column("status", sa.Integer, nullable=False),
    sa.Column("location", BindableText, nullable=False),
    sa.Column("seen_at", UTCDateTime, nullable=False),
    sa.UniqueConstraint("feed_id", "hop"),
)

authors = sa.Table(
    "authors",
    metadata,
    sa.Column("id", WIDE_ID, primary_key=True, autoincrement=True),
    sa.Column("feed_id", sa.Integer, sa.ForeignKey("feeds.id", ondelete="CASCADE"), nullable=False),
    #: the three are one unique key together: each is kept to a third of its room
    sa.Column("name", KeyText(AUTHOR_KEY_BYTES), nullable=False, server_default=""),
    sa.Column("email", KeyText(AUTHOR_KEY_BYTES), nullable=False, server_default=""),
    sa.Column("url", KeyText(AUTHOR_KEY_BYTES), nullable=False, server_default=""),
    sa.Column("source", BindableText, nullable=False, server_default="unknown"),
    sa.UniqueConstraint("feed_id", "name", "email", "url"),
)

feed_links = sa.Table(
    "feed_links",
    metadata,
    sa.Column("id", WIDE_ID, primary_key=True, autoincrement=True),
    sa.Column("feed_id", sa.Integer, sa.ForeignKey("feeds.id", ondelete="CASCADE"), nullable=False),
    sa.Column("url", KeyText(), nullable=False),
    sa.Column("network", BindableText, nullable=False, server_default="web"),
    sa.Column("source", BindableText, nullable=False, server_default="unknown"),
    sa.UniqueConstraint("feed_id", "url"),
)

author_links = sa.Table(
    "author_links",
    metadata,
    sa.Column("id", WIDE_ID, primary_key=True, autoincrement=True),
    sa.Column(
        "author_id", WIDE_ID, sa.ForeignKey("authors.id", ondelete="CASCADE"), nullable=False
    ),
    sa.Column("url", KeyText(), nullable=False),
    sa.Column("network", BindableText, nullable=False, server_default="web"),
    sa.Column("source", BindableText, nullable=False, server_default="unknown"),
    sa.UniqueConstraint("author_id", "url"),
)

outages = sa.Table(
    "outages",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("started_at", UTCDateTime, nullable=False),
    sa.Column("ended_at", UTCDateTime),
    sa.Column("keys", sa.Integer, nullable=False, server_default="0"),
    sa.Column("detail", BindableText, nullable=False, server_default=""),
)
