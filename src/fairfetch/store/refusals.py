"""The database refused: one line for the user, everything else for the traceback.

SQLAlchemy's text of a refused statement is a wall: the driver's message, PostgreSQL's
``DETAIL:`` (which quotes the failing row), ``[SQL: …]``, ``[parameters: …]`` (feed URLs, WebSub
secrets, tokens) and a link. Printed by the CLI, shown by the web or logged, that is both
unreadable and a leak. So each public store function says what it was doing and on what, and a
refusal becomes ``StoreError("store: <doing>: <the database's first line>")``, raised from the
original exception: a traceback or a debug log still has all of it, the message has none.

Only :class:`sqlalchemy.exc.DBAPIError` (the database or its driver refused, or is unreachable)
is translated: any other SQLAlchemy error is a bug of ours and stays loud as it is.
"""

from __future__ import annotations

import functools
import inspect
import sqlite3
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, ParamSpec, TypeVar, cast

import sqlalchemy as sa

from fairfetch.errors import StoreError

P = ParamSpec("P")
R = TypeVar("R")

#: What we were doing: a ``str.format`` template over the call's arguments ("adding feed
#: {url!r}"), or a function of them for what a template cannot say.
Doing = str | Callable[[Mapping[str, Any]], str]


def db_reason(exc: sa.exc.DBAPIError) -> str:
    """The database's own reason, first line only: libpq's hint lines and PostgreSQL's
    ``DETAIL:`` (the failing row, the key's value) are left to the chained exception."""
    text = str(exc.orig) if exc.orig is not None else ""
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return type(exc.orig).__name__ if exc.orig is not None else type(exc).__name__


def _locked(exc: sa.exc.DBAPIError) -> bool:
    """SQLite gave up waiting for another connection's lock (its busy timeout ran out)."""
    return isinstance(exc.orig, sqlite3.OperationalError) and db_reason(exc).startswith(
        ("database is locked", "database table is locked")
    )


def _database(args: Any, kwargs: Any) -> str | None:
    """The database a store function works on, from its arguments (the store it is a method
    of or is given, an object holding one, an engine, a connection), its password masked;
    None when none is there."""
    for value in (*args, *kwargs.values()):
        for engine in (value, getattr(value, "engine", None),
                       getattr(getattr(value, "store", None), "engine", None)):
            if isinstance(engine, sa.Engine):
                return engine.url.render_as_string(hide_password=True)
    return None


def _reason(exc: sa.exc.DBAPIError, args: Any = (), kwargs: Any = None) -> str:
    """The database's reason; for SQLite's "database is locked", which file and why: the
    message then says what to look for (another process, or a program holding it open in a
    transaction), where the bare words named neither."""
    reason = db_reason(exc)
    if _locked(exc):
        where = _database(args, kwargs or {})
        holder = f"{where} was" if where else "it was"
        reason += f" ({holder} kept busy by another connection for longer than fairfetch waits)"
    return reason


def _describe(doing: Doing, sig: inspect.Signature, args: Any, kwargs: Any) -> str:
    try:
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        return doing.format(**bound.arguments) if isinstance(doing, str) else doing(bound.arguments)
    except Exception:  # the message must never hide the refusal it reports
        return doing if isinstance(doing, str) else "working on the database"


def refused(doing: Doing) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Decorate a store function: a refusal of the database inside it is raised as one-line
    StoreError naming ``doing`` (formatted only on failure: no cost on the way through).
    A generator function is covered while it is iterated, not only when it is called."""

    def wrap(fn: Callable[P, R]) -> Callable[P, R]:
        sig = inspect.signature(fn)

        def translated(exc: sa.exc.DBAPIError, args: Any, kwargs: Any) -> StoreError:
            return StoreError(
                f"store: {_describe(doing, sig, args, kwargs)}: {_reason(exc, args, kwargs)}"
            )

        if inspect.isgeneratorfunction(fn):

            @functools.wraps(fn)
            def each(*args: Any, **kwargs: Any) -> Iterator[Any]:
                try:
                    yield from cast(Callable[..., Iterator[Any]], fn)(*args, **kwargs)
                except sa.exc.DBAPIError as exc:
                    raise translated(exc, args, kwargs) from exc

            return cast(Callable[P, R], each)

        @functools.wraps(fn)
        def call(*args: P.args, **kwargs: P.kwargs) -> R:
            try:
                return fn(*args, **kwargs)
            except sa.exc.DBAPIError as exc:
                raise translated(exc, args, kwargs) from exc

        return call

    return wrap


@contextmanager
def refusing(doing: str) -> Iterator[None]:
    """:func:`refused` for a block, when what it works on is known only inside the function
    (a feed asked for by id, removed by its URL)."""
    try:
        yield
    except sa.exc.DBAPIError as exc:
        raise StoreError(f"store: {doing}: {_reason(exc)}") from exc


__all__ = ["db_reason", "refused", "refusing"]
