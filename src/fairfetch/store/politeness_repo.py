"""SQL of the politeness keys' pauses (``tables_politeness``): a Retry-After for every process.

Written when a key is told to wait (rare: throttles); read whole, since it holds only the keys
closed now (a save forgets those whose pause is over): once when a crawl pass begins, and by the
WebSub service for the keys of the feeds a ping names.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from fairfetch.store.refusals import refused
from fairfetch.store.sql import SqlStore
from fairfetch.store.tables_politeness import politeness_keys
from fairfetch.store.upserts import conflict_insert

__all__ = ["current_key_pauses", "load_key_pauses", "save_key_pauses"]


@refused("saving politeness keys' pauses")
def save_key_pauses(store: SqlStore, pauses: Mapping[str, datetime], now: datetime) -> int:
    """Keep each key closed until its time, or until a later one already stored: a shorter
    Retry-After seen by one process never reopens a key another was told to keep shut. Pauses
    over by ``now`` are forgotten on the way (the table holds only keys that are closed)."""
    rows = [{"key": k, "next_allowed_at": t} for k, t in sorted(pauses.items()) if t > now]
    with store.engine.begin() as conn:
        conn.execute(politeness_keys.delete().where(politeness_keys.c.next_allowed_at <= now))
        if rows:
            conn.execute(_upsert(conn.dialect.name), rows)
    return len(rows)


def _upsert(dialect: str) -> Any:
    stmt = conflict_insert(politeness_keys, dialect)
    return stmt.on_conflict_do_update(
        index_elements=[politeness_keys.c.key],
        set_={"next_allowed_at": stmt.excluded.next_allowed_at},
        where=politeness_keys.c.next_allowed_at < stmt.excluded.next_allowed_at,
    )


def load_key_pauses(store: SqlStore, keys: Iterable[str], now: datetime) -> dict[str, datetime]:
    """The keys among ``keys`` that are closed at ``now``, and until when."""
    wanted = set(keys)
    return {k: t for k, t in current_key_pauses(store, now).items() if k in wanted}


@refused("reading politeness keys' pauses")
def current_key_pauses(store: SqlStore, now: datetime) -> dict[str, datetime]:
    """Every key closed at ``now``, and until when: a crawl pass reads them once (the table
    holds only keys told to wait, a handful) instead of a lookup per page of due feeds."""
    c = politeness_keys.c
    with store.engine.connect() as conn:
        rows = conn.execute(sa.select(c.key, c.next_allowed_at).where(c.next_allowed_at > now))
        return {r.key: r.next_allowed_at for r in rows}
