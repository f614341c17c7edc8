"""Work that must happen in the same transaction as new entries (the notification outbox).

The crawler's write of new entries and the outbox rows they cause commit together, so a crash can
never store an entry and lose its notification. Jobs that need this register a function here.

A hook runs inside the store, far from the command that loaded the configuration, so the writer
hands it the :class:`~fairfetch.config.Settings` it crawls with (``None`` when a caller wrote
without any — a hook then falls back to its defaults and the environment). Without this, a knob
set in the config file would be obeyed everywhere except inside the transaction that needs it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

import sqlalchemy as sa

from fairfetch.config import Settings

#: fn(conn, feed_id, new entry row ids, now, first_crawl, the writer's settings or None)
NewEntriesHook = Callable[
    [sa.Connection, int, Sequence[int], datetime, bool, Settings | None], None
]

_hooks: list[NewEntriesHook] = []


def register_new_entries_hook(fn: NewEntriesHook) -> None:
    if fn not in _hooks:
        _hooks.append(fn)


def unregister_new_entries_hook(fn: NewEntriesHook) -> None:
    """Stop running ``fn``: a hook bound to something short-lived (a test's event loop, a
    spy) must not outlive it and fail every later write's transaction."""
    if fn in _hooks:
        _hooks.remove(fn)


def run_new_entries_hooks(
    conn: sa.Connection,
    feed_id: int,
    entry_ids: Sequence[int],
    now: datetime,
    first_crawl: bool,
    settings: Settings | None = None,
) -> None:
    for fn in _hooks:
        fn(conn, feed_id, entry_ids, now, first_crawl, settings)
