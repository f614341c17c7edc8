"""Claims on politeness keys, so that two crawl passes on one store never crawl one key at once.

Operators run `crawl --once` from cron beside `run` (or beside the previous, slow `crawl --once`).
Each pass keeps its politeness slots in its own process: without a claim, two passes over the
same due feeds fetched each of them twice, with two requests in flight on a host where the limit
is one, and each decided the feed's health from the row it had read when the feed was due (a
healthy feed could be marked dead on a stale row). A pass claims the key of each feed it is
about to crawl and holds it until the pass ends; a key another pass holds is left to that pass.

A claim lives as long as its process, never in a table: on PostgreSQL it is a session advisory
lock, on SQLite a one-byte record lock in ``<db>-crawl.lock`` beside the database (the kernel
drops it when the process dies), so a killed pass delays nothing. Keys are claimed through a
bounded number of slots (see SLOTS). This is not the scale-out design (DESIGN.md's leased
``politeness_keys``): a key's rate and pause (AIMD, Retry-After) are still known only to the
process that saw them, and a key is handed over only between passes.
"""

from __future__ import annotations

import fcntl
import hashlib
import threading
from collections.abc import Iterable

import sqlalchemy as sa

from fairfetch.errors import StoreError
from fairfetch.store.lock_files import sqlite_lock_fd
from fairfetch.store.refusals import refused
from fairfetch.store.sql import SqlStore

#: Keys are claimed through this many slots (a key's slot: a hash of it). A pass over a large
#: directory holds the keys of every due feed at once; one PostgreSQL advisory lock per key (tens
#: of thousands) filled the server's shared lock table (``max_locks_per_transaction`` times
#: ``max_connections``: 6,400 by default) and failed the pass. Keys of one slot go to the same
#: pass, which costs nothing: a pass that starts first takes nearly every slot anyway.
SLOTS = 1024

#: First key of the PostgreSQL advisory locks of crawl slots ("crwl"; the second is the slot).
_ADVISORY_NS = 0x6372776C

#: SQLite: slots held by a crawler of this process, per database, and by which one. A POSIX
#: record lock belongs to the process, so two crawlers of one process (two stores opened on one
#: file) would both get one; this tells them apart.
_LOCAL: dict[tuple[str, int], int] = {}
_LOCAL_LOCK = threading.Lock()


def key_slot(key: str) -> int:
    """The claim slot of a politeness key, in ``range(SLOTS)``: the same in every process."""
    digest = hashlib.blake2b(key.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest) % SLOTS


class KeyClaims:
    """One crawler's claims on politeness keys (see the module's docstring)."""

    @refused("opening a crawler's claims on politeness keys")
    def __init__(self, store: SqlStore) -> None:
        self._db = store.engine.url.render_as_string(hide_password=True)
        self._conn: sa.Connection | None = None
        self._fd: int | None = None
        self._held: set[int] = set()
        if store.engine.dialect.name == "postgresql":
            self._conn = store.engine.connect().execution_options(isolation_level="AUTOCOMMIT")
        else:
            self._fd = sqlite_lock_fd(store, "crawl")

    def holds(self, key: str) -> bool:
        return key_slot(key) in self._held

    @refused("claiming politeness keys")
    def claim(self, keys: Iterable[str]) -> set[str]:
        """Claim ``keys`` (those already held stay held); returns every key of ``keys`` this
        crawler now holds. A key another crawler holds is not waited for."""
        slots = {k: key_slot(k) for k in keys}
        wanted = sorted(set(slots.values()) - self._held)
        if self._conn is not None and wanted:
            got = self._conn.execute(
                sa.text(
                    "SELECT s FROM unnest(CAST(:slots AS integer[])) AS w(s) "
                    "WHERE pg_try_advisory_lock(:ns, s)"
                ),
                {"slots": wanted, "ns": _ADVISORY_NS},
            ).scalars()
            self._held.update(int(s) for s in got)
        elif wanted:
            with _LOCAL_LOCK:
                for slot in wanted:
                    if (self._db, slot) in _LOCAL:
                        continue
                    if self._fd is not None:
                        try:
                            fcntl.lockf(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, slot)
                        except OSError:  # EAGAIN/EACCES: another process crawls these keys
                            continue
                    _LOCAL[(self._db, slot)] = id(self)
                    self._held.add(slot)
        return {k for k, slot in slots.items() if slot in self._held}

    @refused("releasing claims on politeness keys")
    def release_all(self) -> None:
        held, self._held = sorted(self._held), set()
        if self._conn is not None:
            if held:
                self._conn.execute(
                    sa.text(
                        "SELECT pg_advisory_unlock(:ns, s) "
                        "FROM unnest(CAST(:slots AS integer[])) AS w(s)"
                    ),
                    {"slots": held, "ns": _ADVISORY_NS},
                )
            return
        with _LOCAL_LOCK:
            for slot in held:
                if _LOCAL.get((self._db, slot)) == id(self):
                    del _LOCAL[(self._db, slot)]
                    if self._fd is not None:
                        fcntl.lockf(self._fd, fcntl.LOCK_UN, 1, slot)

    def close(self) -> None:
        """Release every claim. The connection goes back to the pool only once its locks are
        known to be released; otherwise it is discarded, and its locks with it."""
        try:
            self.release_all()
        except (sa.exc.SQLAlchemyError, StoreError):
            self._held = set()
            if self._conn is not None:
                self._conn.invalidate()
        if self._conn is not None:
            self._conn.close()
            self._conn = None


__all__ = ["SLOTS", "KeyClaims", "key_slot"]
