"""How a long-running command stops: the first SIGINT/SIGTERM asks, the second insists.

Shared by ``crawl`` (for ever) and ``run``/``serve``/``demo``; no web or crawl imports, so the
crawl command does not load the web server to stop."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable

__all__ = ["install_stop_signals"]


def install_stop_signals(
    stop: asyncio.Event, on_stopping: Callable[[], None] | None = None
) -> None:
    """The first SIGINT or SIGTERM sets ``stop`` (every part then finishes its work in hand:
    the crawl's fetches in flight may take up to ``total_timeout``) and calls ``on_stopping``
    (to say so); the next one is the default's again (SIGINT: KeyboardInterrupt, at once, as a
    kill would: nothing is lost, each write being one transaction). Every Ctrl-C used to be
    swallowed until the pass ended."""
    loop = asyncio.get_running_loop()

    def first() -> None:
        stop.set()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.remove_signal_handler(sig)
        if on_stopping is not None:
            on_stopping()

    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(sig, first)
