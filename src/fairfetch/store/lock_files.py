"""Lock files beside a SQLite database, for claims between processes.

Two processes on one SQLite file (a cron ``crawl --once`` or ``notify send-due`` beside ``run``)
claim work with one-byte POSIX record locks: the kernel drops them when the process dies, so a
crash delays nothing, as PostgreSQL's session advisory locks do. Each kind of claim has a file of
its own (``<db>-crawl.lock``, ``<db>-notify.lock``), never the database itself: SQLite takes
record locks on its own files and closes their descriptors.
"""

from __future__ import annotations

import os
import threading

from fairfetch.store.sql import SqlStore

__all__ = ["sqlite_lock_fd"]

_OPEN_LOCK = threading.Lock()
#: One descriptor per lock file, open for the life of the process: closing any descriptor of a
#: file drops every record lock the process holds on it, so it is never closed.
_LOCK_FILES: dict[str, int] = {}


def sqlite_lock_fd(store: SqlStore, kind: str) -> int | None:
    """The descriptor of ``<db>-<kind>.lock`` beside the store's SQLite file, or None for an
    in-memory database (one process by definition)."""
    path = store.engine.url.database
    if not path or path == ":memory:" or path.startswith("file::memory:"):
        return None
    lock_path = f"{os.path.realpath(path)}-{kind}.lock"
    with _OPEN_LOCK:
        fd = _LOCK_FILES.get(lock_path)
        if fd is None:
            fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            _LOCK_FILES[lock_path] = fd
    return fd
