"""PostgreSQL's listing indexes on nullable columns are built NULLS FIRST.

A feed with no title yet, or no dated entry, sorts as the smallest value on both backends
(SQLite's own rule for NULL): "newest first" ends with the feeds that never published, where
PostgreSQL, which sorts NULL as the largest, listed them on top. The listing asks PostgreSQL
for ``ASC NULLS FIRST`` / ``DESC NULLS LAST``; an index built NULLS FIRST, read forwards or
backwards, still hands those pages out as an index range. SQLite keeps its indexes (it has
no NULLS FIRST in CREATE INDEX, and needs none).

Revision ID: 0010_listing_nulls_first
Revises: 0007_feed_duplicate_of
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010_listing_nulls_first"
down_revision = "0007_feed_duplicate_of"
branch_labels = None
depends_on = None

#: (index, columns as created by 0004, the nullable sort key last)
_NULLABLE = (
    ("ix_feeds_title_lower", "lower(title)"),
    ("ix_feeds_kind_title_lower", "kind, lower(title)"),
    ("ix_feeds_newest_entry_at", "newest_entry_at"),
    ("ix_feeds_kind_newest_entry_at", "kind, newest_entry_at"),
)


def _rebuild(nulls: str) -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    for name, cols in _NULLABLE:
        op.execute(sa.text(f"DROP INDEX IF EXISTS {name}"))
        op.execute(sa.text(f"CREATE INDEX {name} ON feeds ({cols}{nulls})"))


def upgrade() -> None:
    _rebuild(" NULLS FIRST")


def downgrade() -> None:
    _rebuild("")
