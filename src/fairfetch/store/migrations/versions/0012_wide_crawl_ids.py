"""64-bit ids, on PostgreSQL, for the core rows written on every crawl.

SQLite's row ids are 64-bit already; PostgreSQL's ``serial`` is a 32-bit INTEGER whose
sequence stops at 2,147,483,647. A crawl row is written per attempt, and a feed's hops,
contacts and authors are deleted and inserted again on each crawl that carries them, so a
directory of 100,000 feeds read every half hour reached the end of ``crawls_id_seq`` in about
fifteen months, and every crawl write failed from then on. (Entries and notifications spend an
id per new item, not per crawl, and keep theirs.)

Revision ID: 0012_wide_crawl_ids
Revises: 0011_long_entry_ids
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012_wide_crawl_ids"
down_revision = "0011_long_entry_ids"
branch_labels = None
depends_on = None

_TABLES = ("crawls", "redirects", "feed_links", "authors", "author_links")


def _widen(kind: str) -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    for table in _TABLES:
        op.execute(sa.text(f"ALTER TABLE {table} ALTER COLUMN id TYPE {kind}"))
        # A serial's sequence has a type of its own, and stops at its maximum.
        op.execute(sa.text(f"ALTER SEQUENCE {table}_id_seq AS {kind}"))
    op.execute(sa.text(f"ALTER TABLE author_links ALTER COLUMN author_id TYPE {kind}"))


def upgrade() -> None:
    _widen("bigint")


def downgrade() -> None:
    _widen("integer")
