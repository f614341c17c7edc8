"""Blocking work a cancelled task must still see to its end: the claims a crawl pass takes on
politeness keys, and their hand-back.

``asyncio.to_thread`` is the wrong tool for them. Cancelled before a worker thread has taken the
call up, it drops the call: a pass stopped (Ctrl-C, an embedder's timeout) as it handed its keys
back never handed them, and every later pass of the process skipped their feeds as claimed by
"another crawler", for the life of the process. Cancelled while the call runs, it leaves it
running unawaited: a claim still being taken while the pass's ``finally`` hands the claims back
ends up held, with nobody left to release it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


async def run_to_the_end(fn: Callable[[], T], *, name: str = "fairfetch-claims") -> T:
    """Run ``fn`` in a thread of its own; if the awaiting task is cancelled meanwhile, wait
    (blocking the loop, which only a cancellation reaches) until ``fn`` has finished, then let
    the cancellation go on. The thread needs nothing from the event loop, so the wait cannot
    deadlock."""
    done: concurrent.futures.Future[T] = concurrent.futures.Future()

    def work() -> None:
        if not done.set_running_or_notify_cancel():  # pragma: no cover - never cancelled
            return
        try:
            done.set_result(fn())
        except BaseException as exc:  # handed to the awaiting task
            done.set_exception(exc)

    threading.Thread(target=work, name=name, daemon=True).start()
    try:
        return await asyncio.shield(asyncio.wrap_future(done))
    except asyncio.CancelledError:
        concurrent.futures.wait([done])
        raise
