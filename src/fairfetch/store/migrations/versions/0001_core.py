"""Core tables: feeds, entries, crawls, redirects, authors, feed_links, author_links, outages.

Revision ID: 0001_core
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from fairfetch.store.types import UTCDateTime

revision = "0001_core"
down_revision = None
branch_labels = ("core",)
depends_on = None


def upgrade() -> None:
    op.create_table(
        "feeds",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("url", sa.Text, nullable=False),
        sa.Column("original_url", sa.Text, nullable=False),
        sa.Column("title", sa.Text),
        sa.Column("link", sa.Text),
        sa.Column("description", sa.Text),
        sa.Column("language", sa.Text),
        sa.Column("image_url", sa.Text),
        sa.Column("generator", sa.Text),
        sa.Column("format", sa.Text),
        sa.Column("kind", sa.Text),
        sa.Column("kind_evidence", sa.JSON, nullable=False, server_default="[]"),
        sa.Column("categories", sa.JSON, nullable=False, server_default="[]"),
        sa.Column("backend", sa.Text),
        sa.Column("politeness_key", sa.Text, nullable=False),
        sa.Column("status", sa.Text, nullable=False, server_default="new"),
        sa.Column("error_count", sa.Integer, nullable=False, server_default="0"),
        sa.Column("last_error", sa.Text),
        sa.Column("last_success_at", UTCDateTime),
        sa.Column("last_fetched_at", UTCDateTime),
        sa.Column("next_crawl_at", UTCDateTime),
        sa.Column("added_at", UTCDateTime, nullable=False),
        sa.Column("etag", sa.Text),
        sa.Column("last_modified", sa.Text),
        sa.Column("interval_seconds", sa.Float),
        sa.Column("redirect_candidate", sa.Text),
        sa.Column("redirect_candidate_count", sa.Integer, nullable=False, server_default="0"),
        sa.Column("hub_urls", sa.JSON, nullable=False, server_default="[]"),
        sa.Column("self_url", sa.Text),
        sa.Column("entry_count", sa.Integer, nullable=False, server_default="0"),
        sa.Column("newest_entry_at", UTCDateTime),
        sa.Column("crawl_count", sa.Integer, nullable=False, server_default="0"),
        sa.PrimaryKeyConstraint("id", name="pk_feeds"),
        sa.UniqueConstraint("url", name="uq_feeds_url"),
    )
    op.create_index("ix_feeds_original_url", "feeds", ["original_url"])
    op.create_index("ix_feeds_politeness_key", "feeds", ["politeness_key"])
    op.create_index("ix_feeds_next_crawl_at", "feeds", ["next_crawl_at"])

    op.create_table(
        "entries",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("feed_id", sa.Integer, nullable=False),
        sa.Column("entry_id", sa.Text, nullable=False),
        sa.Column("title", sa.Text),
        sa.Column("link", sa.Text),
        sa.Column("published", UTCDateTime),
        sa.Column("updated", UTCDateTime),
        sa.Column("summary", sa.Text),
        sa.Column("content", sa.Text),
        sa.Column("authors", sa.JSON, nullable=False, server_default="[]"),
        sa.Column("categories", sa.JSON, nullable=False, server_default="[]"),
        sa.Column("enclosures", sa.JSON, nullable=False, server_default="[]"),
        sa.Column("image_url", sa.Text),
        sa.Column("content_hash", sa.Text, nullable=False, server_default=""),
        sa.Column("first_seen_at", UTCDateTime, nullable=False),
        sa.Column("last_seen_at", UTCDateTime, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_entries"),
        sa.ForeignKeyConstraint(
            ["feed_id"], ["feeds.id"], name="fk_entries_feed_id_feeds", ondelete="CASCADE"
        ),
        sa.UniqueConstraint("feed_id", "entry_id", name="uq_entries_feed_id_entry_id"),
    )
    op.create_index("ix_entries_feed_id_first_seen_at", "entries", ["feed_id", "first_seen_at"])

    op.create_table(
        "crawls",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("feed_id", sa.Integer),
        sa.Column("url", sa.Text, nullable=False),
        sa.Column("at", UTCDateTime, nullable=False),
        sa.Column("outcome", sa.Text, nullable=False),
        sa.Column("http_status", sa.Integer),
        sa.Column("error_kind", sa.Text),
        sa.Column("error_detail", sa.Text),
        sa.Column("bytes", sa.Integer, nullable=False, server_default="0"),
        sa.Column("duration", sa.Float, nullable=False, server_default="0"),
        sa.Column("politeness_key", sa.Text, nullable=False, server_default=""),
        sa.Column("new_entries", sa.Integer, nullable=False, server_default="0"),
        sa.Column("trigger", sa.Text, nullable=False, server_default="poll"),
        sa.PrimaryKeyConstraint("id", name="pk_crawls"),
        sa.ForeignKeyConstraint(
            ["feed_id"], ["feeds.id"], name="fk_crawls_feed_id_feeds", ondelete="CASCADE"
        ),
    )
    op.create_index("ix_crawls_at", "crawls", ["at"])
    op.create_index("ix_crawls_feed_id_at", "crawls", ["feed_id", "at"])

    op.create_table(
        "redirects",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("feed_id", sa.Integer, nullable=False),
        sa.Column("hop", sa.Integer, nullable=False),
        sa.Column("url", sa.Text, nullable=False),
        sa.Column("status", sa.Integer, nullable=False),
        sa.Column("location", sa.Text, nullable=False),
        sa.Column("seen_at", UTCDateTime, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_redirects"),
        sa.ForeignKeyConstraint(
            ["feed_id"], ["feeds.id"], name="fk_redirects_feed_id_feeds", ondelete="CASCADE"
        ),
        sa.UniqueConstraint("feed_id", "hop", name="uq_redirects_feed_id_hop"),
    )

    op.create_table(
        "authors",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("feed_id", sa.Integer, nullable=False),
        sa.Column("name", sa.Text, nullable=False, server_default=""),
        sa.Column("email", sa.Text, nullable=False, server_default=""),
        sa.Column("url", sa.Text, nullable=False, server_default=""),
        sa.Column("source", sa.Text, nullable=False, server_default="unknown"),
        sa.PrimaryKeyConstraint("id", name="pk_authors"),
        sa.ForeignKeyConstraint(
            ["feed_id"], ["feeds.id"], name="fk_authors_feed_id_feeds", ondelete="CASCADE"
        ),
        sa.UniqueConstraint(
            "feed_id", "name", "email", "url", name="uq_authors_feed_id_name_email_url"
        ),
    )

    op.create_table(
        "feed_links",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("feed_id", sa.Integer, nullable=False),
        sa.Column("url", sa.Text, nullable=False),
        sa.Column("network", sa.Text, nullable=False, server_default="web"),
        sa.Column("source", sa.Text, nullable=False, server_default="unknown"),
        sa.PrimaryKeyConstraint("id", name="pk_feed_links"),
        sa.ForeignKeyConstraint(
            ["feed_id"], ["feeds.id"], name="fk_feed_links_feed_id_feeds", ondelete="CASCADE"
        ),
        sa.UniqueConstraint("feed_id", "url", name="uq_feed_links_feed_id_url"),
    )

    op.create_table(
        "author_links",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("author_id", sa.Integer, nullable=False),
        sa.Column("url", sa.Text, nullable=False),
        sa.Column("network", sa.Text, nullable=False, server_default="web"),
        sa.Column("source", sa.Text, nullable=False, server_default="unknown"),
        sa.PrimaryKeyConstraint("id", name="pk_author_links"),
        sa.ForeignKeyConstraint(
            ["author_id"],
            ["authors.id"],
            name="fk_author_links_author_id_authors",
            ondelete="CASCADE",
        ),
        sa.UniqueConstraint("author_id", "url", name="uq_author_links_author_id_url"),
    )

    op.create_table(
        "outages",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("started_at", UTCDateTime, nullable=False),
        sa.Column("ended_at", UTCDateTime),
        sa.Column("keys", sa.Integer, nullable=False, server_default="0"),
        sa.Column("detail", sa.Text, nullable=False, server_default=""),
        sa.PrimaryKeyConstraint("id", name="pk_outages"),
    )


def downgrade() -> None:
    for name in (
        "outages",
        "author_links",
        "feed_links",
        "authors",
        "redirects",
        "crawls",
        "entries",
        "feeds",
    ):
        op.drop_table(name)
