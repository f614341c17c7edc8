"""Work that must happen in the same transaction as new entries (the notification outbox).

The crawler's write of new entries and the outbox rows they cause commit together, so a crash can
never store an entry and lose its notification. Jobs that need this register a function here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

import sqlalchemy as sa

#: fn(conn, feed_id, new entry row ids, now, first_crawl)
NewEntriesHook = Callable[[sa.Connection, int, Sequence[int], datetime, bool], None]

_hooks: list[NewEntriesHook] = []


def register_new_entries_hook(fn: NewEntriesHook) -> None:
    if fn not in _hooks:
        _hooks.append(fn)


def run_new_entries_hooks(
    conn: sa.Connection, feed_id: int, entry_ids: Sequence[int], now: datetime, first_crawl: bool
) -> None:
    for fn in _hooks:
        fn(conn, feed_id, entry_ids, now, first_crawl)
