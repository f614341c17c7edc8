"""Entry ids too long for an index are stored shortened (``fairfetch.store.types.key_text``).

A guid over 2,000 UTF-8 bytes is kept as its head, ``…#`` and a digest of the whole, so that
it fits PostgreSQL's btree (a longer one failed the whole crawl batch there). Ids stored whole
before (SQLite took any length; PostgreSQL up to about 2,700 bytes) are rewritten the same
way here: looked up by their new form, they would otherwise be stored again as new entries,
and mailed again.

The rule is copied, not imported: a migration does what it did when it shipped.

Revision ID: 0011_long_entry_ids
Revises: 0010_listing_nulls_first
"""

from __future__ import annotations

import hashlib
import re

import sqlalchemy as sa
from alembic import op

revision = "0011_long_entry_ids"
down_revision = "0010_listing_nulls_first"
branch_labels = None
depends_on = None

_LIMIT = 2000
_UNBINDABLE = re.compile("[\x00\ud800-\udfff]")


def _shortened(value: str) -> str:
    value = _UNBINDABLE.sub("\ufffd", value)
    data = value.encode("utf-8")
    if len(data) <= _LIMIT:
        return value
    digest = hashlib.blake2b(data, digest_size=16).hexdigest()
    return data[: _LIMIT - 64].decode("utf-8", "ignore") + "\u2026#" + digest


def upgrade() -> None:
    bind = op.get_bind()
    # Over _LIMIT bytes means over _LIMIT / 4 characters: the few candidates, not every row.
    rows = bind.execute(
        sa.text("SELECT id, entry_id FROM entries WHERE length(entry_id) > :n"),
        {"n": _LIMIT // 4},
    ).all()
    changed = [
        {"i": row_id, "e": _shortened(eid)} for row_id, eid in rows if _shortened(eid) != eid
    ]
    if changed:
        bind.execute(sa.text("UPDATE entries SET entry_id = :e WHERE id = :i"), changed)


def downgrade() -> None:
    pass  # the whole ids are gone; the shortened ones work as ids
