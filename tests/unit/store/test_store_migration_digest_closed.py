"""Migration 0006: a digest issue's closing moves from an empty ``subject`` (the mark used
before the column existed) to ``closed_at``, on SQLite and PostgreSQL; nothing else changes."""

from __future__ import annotations

from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import command

from fairfetch.store.engine import create_engine
from fairfetch.store.migrate import _config, upgrade


def test_store_migration_moves_the_closed_mark_to_closed_at(db_url: str) -> None:
    engine = create_engine(db_url)
    try:
        with engine.begin() as conn:  # every head but the new one
            command.upgrade(_config(conn), "heads")
            command.downgrade(_config(conn), "0003_notify")
        now = datetime(2026, 11, 30, 8, 0, tzinfo=UTC).isoformat()
        with engine.begin() as conn:
            conn.execute(sa.text(
                "INSERT INTO notify_readers (id, email, created_at, token) "
                "VALUES (1, 'a@b.test', :t, 'tk')"
            ), {"t": now})
            for i, (status, subject) in enumerate(
                [("pending", ""), ("pending", None), ("sent", "Daily digest")], start=1
            ):
                conn.execute(sa.text(
                    "INSERT INTO notify_outbox (id, dedupe_key, kind, reader_id, status, "
                    "created_at, due_at, message_id, subject) VALUES "
                    "(:i, :k, 'digest', 1, :s, :t, :t, :m, :subject)"
                ), {"i": i, "k": f"digest:{i}", "s": status, "t": now, "m": f"<{i}@x>",
                    "subject": subject})
        upgrade(engine)
        with engine.connect() as conn:
            rows = conn.execute(sa.text(
                "SELECT id, status, subject, closed_at IS NOT NULL FROM notify_outbox ORDER BY id"
            )).all()
        assert [tuple(r) for r in rows] == [
            (1, "pending", None, True),  # closed, by the old mark
            (2, "pending", None, False),  # open
            (3, "sent", "Daily digest", False),
        ]
    finally:
        engine.dispose()
