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
    (to say so); the next one stops at once (SIGINT: KeyboardInterrupt from the loop, as a
    kill would: nothing is lost, each write being one transaction). Every Ctrl-C used to be
    swallowed until the pass ended."""
    loop = asyncio.get_running_loop()

    def again() -> None:
        raise KeyboardInterrupt  # out of the loop at once (asyncio lets it through)

    def first() -> None:
        stop.set()
        # SIGTERM's default again (a second one terminates). SIGINT keeps a handler of the
        # loop's, not the default one: removing the loop's last handler also removed its
        # wake-up descriptor, and a second Ctrl-C that the kernel handed to another thread (a
        # resolver or writer thread) then waited, unseen, until the loop next woke: with the
        # feed's server silent, up to the fetch's time cap.
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.remove_signal_handler(signal.SIGTERM)
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(signal.SIGINT, again)
        if on_stopping is not None:
            on_stopping()

    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(sig, first)
