"""Alembic environment: migrations run on the connection fairfetch hands over (never a URL
read from alembic.ini), so the same code migrates SQLite and PostgreSQL on first use."""

from __future__ import annotations

from alembic import context

from fairfetch.store.schema import metadata

config = context.config
connection = config.attributes.get("connection")
if connection is None:  # pragma: no cover - only reached by the alembic CLI
    raise RuntimeError("fairfetch migrations run through fairfetch.store.migrate")

context.configure(
    connection=connection,
    target_metadata=metadata,
    render_as_batch=connection.dialect.name == "sqlite",
)
with context.begin_transaction():
    context.run_migrations()
