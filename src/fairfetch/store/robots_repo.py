"""SQL of the robots.txt copies (``tables_robots``): one read per origin, batched saves.

The crawler asks for an origin's copy the first time the process meets that origin (a point
lookup on the primary key) and saves what it fetched in batches; see
:class:`fairfetch.net.robots.RobotsCache` for what a copy means.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa

from fairfetch.net.robots import RobotsCopy
from fairfetch.store.refusals import refused
from fairfetch.store.sql import SqlStore
from fairfetch.store.tables_robots import robots_txt
from fairfetch.store.upserts import conflict_insert

__all__ = ["load_robots", "load_robots_many", "prune_robots", "save_robots"]

_CHUNK = 400


def load_robots(store: SqlStore, origin: str) -> RobotsCopy | None:
    return load_robots_many(store, [origin]).get(origin)


@refused('reading stored robots.txt copies')
def load_robots_many(store: SqlStore, origins: Iterable[str]) -> dict[str, RobotsCopy]:
    """The stored copies of these origins (one query per few hundred; absent ones left out)."""
    wanted = sorted(set(origins))
    c = robots_txt.c
    found: dict[str, RobotsCopy] = {}
    with store.engine.connect() as conn:
        for start in range(0, len(wanted), _CHUNK):
            rows = conn.execute(
                sa.select(c.origin, c.state, c.status, c.body, c.fetched_at).where(
                    c.origin.in_(wanted[start : start + _CHUNK])
                )
            )
            for r in rows:
                found[r.origin] = RobotsCopy(
                    r.origin, r.state, r.status, r.body, r.fetched_at.timestamp()
                )
    return found


@refused('saving robots.txt copies')
def save_robots(store: SqlStore, copies: Sequence[RobotsCopy]) -> int:
    """Replace the stored copy of each origin (the newest copy of an origin in ``copies`` wins)."""
    latest: dict[str, RobotsCopy] = {}
    for copy in copies:
        if copy.origin not in latest or copy.fetched_at >= latest[copy.origin].fetched_at:
            latest[copy.origin] = copy
    rows = [
        {
            "origin": c.origin,
            "state": c.state,
            "status": c.status,
            "body": c.body,
            "fetched_at": datetime.fromtimestamp(c.fetched_at, UTC),
        }
        for c in latest.values()
    ]
    with store.engine.begin() as conn:
        upsert = _upsert(conn.dialect.name)
        for start in range(0, len(rows), _CHUNK):
            conn.execute(upsert, rows[start : start + _CHUNK])
    return len(rows)


def _upsert(dialect: str) -> Any:
    """INSERT, or replace the origin's copy when it is not newer than this one.

    Another process may be saving the same origin (a cron pass and a ping's re-fetch read one
    host): replaced by DELETE then INSERT, the second saver's INSERT broke the primary key once
    the first committed, and its whole save (every origin in it) failed. Compared on
    ``fetched_at``, a copy fetched earlier and saved later never replaces a newer one."""
    stmt = conflict_insert(robots_txt, dialect)
    new = stmt.excluded
    return stmt.on_conflict_do_update(
        index_elements=[robots_txt.c.origin],
        set_={"state": new.state, "status": new.status, "body": new.body,
              "fetched_at": new.fetched_at},
        where=robots_txt.c.fetched_at <= new.fetched_at,
    )


@refused('forgetting old robots.txt copies')
def prune_robots(store: SqlStore, older_than: datetime) -> int:
    """Forget copies too old to stand in for anything (past the stale-copy window)."""
    with store.engine.begin() as conn:
        gone = conn.execute(robots_txt.delete().where(robots_txt.c.fetched_at < older_than))
        return gone.rowcount
