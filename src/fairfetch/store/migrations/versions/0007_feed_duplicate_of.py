"""A feed's link to the feed it duplicates: ``feeds.duplicate_of``.

A feed whose confirmed permanent redirect lands on a URL another feed holds is dead with error
kind ``duplicate``; until now the other feed was named only inside ``last_error``, so nothing
could follow it (its readers were left on a feed that is no longer crawled). Feeds recorded so
before this column are linked from that text once, here.

Revision ID: 0007_feed_duplicate_of
Revises: 0004_directory
"""

from __future__ import annotations

import re

import sqlalchemy as sa
from alembic import op

revision = "0007_feed_duplicate_of"
down_revision = "0004_directory"
branch_labels = None
depends_on = None

_NAMED = re.compile(r"which feed #(\d+) already crawls")


def upgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name == "sqlite":
        # SQLite adds a column with a REFERENCES clause in place (its default is NULL); a
        # batch rebuild of ``feeds`` would drop the full-text triggers on it.
        op.execute(
            "ALTER TABLE feeds ADD COLUMN duplicate_of INTEGER "
            "REFERENCES feeds (id) ON DELETE SET NULL"
        )
    else:
        op.add_column("feeds", sa.Column("duplicate_of", sa.Integer))
        op.create_foreign_key(
            "fk_feeds_duplicate_of_feeds", "feeds", "feeds", ["duplicate_of"], ["id"],
            ondelete="SET NULL",
        )
    op.create_index("ix_feeds_duplicate_of", "feeds", ["duplicate_of"])
    rows = bind.execute(
        sa.text(
            "SELECT id, last_error FROM feeds WHERE status = 'dead' "
            "AND last_error LIKE 'duplicate: %'"
        )
    ).all()
    for fid, text in rows:
        found = _NAMED.search(text or "")
        if found is None:
            continue
        bind.execute(
            sa.text(
                "UPDATE feeds SET duplicate_of = :other WHERE id = :id "
                "AND EXISTS (SELECT 1 FROM feeds AS f WHERE f.id = :other)"
            ),
            {"other": int(found.group(1)), "id": fid},
        )


def downgrade() -> None:
    op.drop_index("ix_feeds_duplicate_of", "feeds")
    if op.get_bind().dialect.name != "sqlite":
        op.drop_constraint("fk_feeds_duplicate_of_feeds", "feeds", type_="foreignkey")
    op.drop_column("feeds", "duplicate_of")
