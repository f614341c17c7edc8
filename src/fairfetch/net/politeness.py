"""Politeness: whose server a request lands on, and how often we may knock.

Three layers, from pure to I/O:

* **Keys** — :func:`politeness_key` names the budget a request spends: a detected backend
  (``backend:substack``), else the private-section suffix a host is under (``blogspot.com``,
  ``github.io``: one backend serves every blog there although the PSL makes each its own
  registrable domain), else the registrable domain (``example.co.uk``). IP literals key by
  themselves. :class:`BackendGrouper` adds backends found by evidence: hosts of different
  registrable domains on one address that are throttled in the same window share one key, each
  host on its own evidence and while that evidence holds.
* **State** — :class:`PolitenessState` is the dispatch state machine with no asyncio and an
  explicit ``now``: per-key in-flight caps and start gaps, one request per host, AIMD on
  throttles, key-wide pauses for Retry-After, round-robin over keys with pending work. Its
  central invariant (a key is in the round iff its queue is non-empty) is checked in code on
  every operation, because an invariant written in a comment is one nobody checks.
* **Dispatcher** — :class:`Dispatcher` drives the state with asyncio tasks.

The first two live in :mod:`~fairfetch.net.politeness_keys` and
:mod:`~fairfetch.net.politeness_state`; this module holds the driver and names all three.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Generic, TypeVar

from fairfetch.errors import FairfetchError
from fairfetch.net.politeness_keys import (
    BackendGrouper,
    host_of,
    politeness_key,
    registrable_domain,
)
from fairfetch.net.politeness_state import (
    Feedback,
    InvariantError,
    KeyStats,
    PolitenessState,
    Slot,
)

if TYPE_CHECKING:
    from fairfetch.config import Settings

__all__ = [
    "BackendGrouper",
    "Dispatcher",
    "DispatcherClosed",
    "Feedback",
    "InvariantError",
    "KeyStats",
    "PolitenessState",
    "Slot",
    "host_of",
    "politeness_key",
    "registrable_domain",
]

T = TypeVar("T")


class DispatcherClosed(FairfetchError):
    """``put`` after ``close``."""


class Dispatcher(Generic[T]):
    """Runs a handler over queued items under the politeness rules of :class:`PolitenessState`.

    ``put`` queues (waiting while ``max_pending`` items are queued); ``run`` starts handler calls
    as the rules allow and returns once ``close`` was called and all work is done. A handler
    should turn its own failures into Feedback; an exception escaping it is loud: no further
    work starts, in-flight calls finish, and ``run`` raises it.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        clock: Callable[[], float] = time.monotonic,
        max_pending: int = 10_000,
    ) -> None:
        self.state: PolitenessState[T] = PolitenessState.from_settings(settings)
        self._clock = clock
        self._max_pending = max(1, max_pending)
        self._wake = asyncio.Event()
        self._space = asyncio.Event()
        self._closed = False

    async def put(self, url: str, item: T, *, key: str | None = None) -> None:
        while self.state.pending >= self._max_pending and not self._closed:
            self._space.clear()
            await self._space.wait()
        if self._closed:
            raise DispatcherClosed("put after close")
        host = host_of(url)
        self.state.push(key or politeness_key(host), host, item)
        self._wake.set()

    def close(self) -> None:
        self._closed = True
        self._wake.set()
        self._space.set()

    def set_gap(self, key: str, seconds: float | None, *, host: str | None = None) -> None:
        """Extra minimum gap between starts on ``key``: a robots.txt crawl-delay of ``host``
        (see :meth:`PolitenessState.set_gap`: the key keeps the longest its hosts asked for)."""
        self.state.set_gap(key, seconds, host=host_of(host) if host else None)
        self._wake.set()

    def pause_for(self, key: str, seconds: float) -> None:
        """No start on ``key`` for ``seconds`` from now (on the dispatcher's clock)."""
        self.state.pause_until(key, self._clock() + seconds)
        self._wake.set()

    def drop(self, key: str) -> list[T]:
        """Take ``key``'s queued items back (e.g. to reschedule a paused key's feeds)."""
        items = self.state.drop(key)
        self._space.set()
        self._wake.set()
        return items

    def wake(self) -> None:
        """Re-evaluate now (after an injected clock moved, or settings changed)."""
        self._wake.set()

    def snapshot(self) -> dict[str, KeyStats]:
        return self.state.snapshot()

    async def run(self, handler: Callable[[T], Awaitable[Feedback]]) -> None:
        tasks: set[asyncio.Task[None]] = set()
        errors: list[BaseException] = []
        state = self.state
        try:
            while True:
                self._wake.clear()
                now = self._clock()
                while not errors:
                    slot = state.pop_ready(now)
                    if slot is None:
                        break
                    task = asyncio.create_task(self._one(handler, slot, errors))
                    tasks.add(task)
                    task.add_done_callback(tasks.discard)
                if state.pending < self._max_pending:
                    self._space.set()
                if errors:  # loud: start nothing more, let in-flight calls finish, raise
                    if tasks:
                        await asyncio.wait(set(tasks))
                    break
                if self._closed and state.idle:
                    break
                wake_at = state.wake_hint  # left by the pop_ready that returned None
                if wake_at is None:
                    await self._wake.wait()
                else:
                    try:
                        async with asyncio.timeout(max(0.0, wake_at - now)):
                            await self._wake.wait()
                    except TimeoutError:
                        pass
        finally:
            if tasks:
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
        if errors:
            if len(errors) == 1:
                raise errors[0]
            raise BaseExceptionGroup("dispatcher handlers failed", errors)

    async def _one(
        self,
        handler: Callable[[T], Awaitable[Feedback]],
        slot: Slot[T],
        errors: list[BaseException],
    ) -> None:
        feedback = Feedback()
        try:
            result = await handler(slot.item)
            if isinstance(result, Feedback):
                feedback = result
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            errors.append(exc)
        finally:
            self.state.finish(slot, feedback, self._clock())
            self._wake.set()
