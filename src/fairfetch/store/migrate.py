"""Schema creation and migration on first use.

Every job's migrations branch from ``0001_core``; we upgrade to ``heads`` so independent jobs
don't have to chain on each other.
"""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory

_SCRIPTS = str(Path(__file__).with_name("migrations"))


def _config(connection: sa.Connection | None = None) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", _SCRIPTS)
    if connection is not None:
        cfg.attributes["connection"] = connection
    return cfg


def is_current(engine: sa.Engine) -> bool:
    """True when every migration head is applied (cheap: one small query)."""
    heads = set(ScriptDirectory.from_config(_config()).get_heads())
    with engine.connect() as conn:
        current = set(MigrationContext.configure(conn).get_current_heads())
    return current == heads


def upgrade(engine: sa.Engine) -> None:
    """Apply every pending migration, in one transaction where the database allows it."""
    if is_current(engine):
        return
    with engine.begin() as conn:
        command.upgrade(_config(conn), "heads")
