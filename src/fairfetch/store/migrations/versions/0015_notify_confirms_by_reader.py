"""An index to count the confirmation mails sent to one address lately.

Subscribing queues a confirmation mail; the public form caps them per address a day
(``CONFIRMS_PER_ADDRESS_PER_DAY``), counted over ``notify_outbox`` by reader, kind and time.
The outbox keeps every notification ever sent: without this index each post of the form would
read all of it.

Revision ID: 0015_notify_confirms_by_reader
Revises: 0006_digest_closed
"""

from __future__ import annotations

from alembic import op

revision = "0015_notify_confirms_by_reader"
down_revision = "0006_digest_closed"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index(
        "ix_notify_outbox_reader_kind_created", "notify_outbox", ["reader_id", "kind", "created_at"]
    )


def downgrade() -> None:
    op.drop_index("ix_notify_outbox_reader_kind_created", table_name="notify_outbox")
