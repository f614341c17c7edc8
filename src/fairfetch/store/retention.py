"""How long the logs of attempts are kept.

Every fetch writes a ``crawls`` row and every WebSub delivery a ``websub_pings`` row: kept for
ever, a directory of 10,000 feeds read hourly adds ~88 million crawl rows a year, and the file
(or the PostgreSQL table) only grows. What reads them looks back a day (/crawlstats), at a
feed's recent crawls (``feeds show``), or at its last good read (the notifier's republish
guard, which the default of 90 days leaves far behind its own 14-day horizon).

Rows go in chunks, each its own transaction: one DELETE of millions of rows would hold
SQLite's one write lock (and the crawler's writes behind it) for as long as it runs. A
feed's last good read is never pruned (see :func:`prune_logs`).
"""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa

from fairfetch.store.refusals import refused
from fairfetch.store.sql import SqlStore
from fairfetch.store.tables import crawls
from fairfetch.store.tables_websub import websub_pings

__all__ = ["LOG_TABLES", "prune_logs"]

#: The tables pruned, each with its time column.
LOG_TABLES: tuple[tuple[sa.Table, sa.Column[datetime]], ...] = (
    (crawls, crawls.c.at),
    (websub_pings, websub_pings.c.at),
)

#: Rows deleted per transaction.
_CHUNK = 10_000


@refused("pruning old crawl and ping logs")
def prune_logs(store: SqlStore, older_than: datetime, *, chunk: int = _CHUNK) -> dict[str, int]:
    """Delete log rows dated before ``older_than``; rows deleted, per table.

    Each feed's last good read (its newest ``ok`` or ``not_modified`` crawl row) is kept
    however old: the notifier counts the age of items published while we could not read the
    feed from it (an outage of ours is not the items' fault), and after a season without a
    read the prune would have made them "old" and dropped them unmailed."""
    deleted: dict[str, int] = {}
    for table, at in LOG_TABLES:
        pk = table.c.id
        keep: set[int] = set()
        if table is crawls:
            with store.engine.connect() as conn:
                keep = {
                    int(r[0])
                    for r in conn.execute(
                        sa.select(sa.func.max(crawls.c.id))
                        .where(crawls.c.outcome.in_(("ok", "not_modified")))
                        .group_by(crawls.c.feed_id)
                    )
                }
        total = 0
        after = 0
        while True:
            with store.engine.begin() as conn:
                ids = [
                    int(r[0])
                    for r in conn.execute(
                        sa.select(pk)
                        .where(at < older_than, pk > after)
                        .order_by(pk)
                        .limit(chunk)
                    )
                ]
                if not ids:
                    break
                after = ids[-1]
                doomed = [i for i in ids if i not in keep]
                if doomed:
                    conn.execute(table.delete().where(pk.in_(doomed)))
            total += len(doomed)
            if len(ids) < chunk:
                break
        deleted[table.name] = total
    return deleted
