"""Public helpers for testing against fairfetch's simulated web (the testbed).

``running_testbed`` runs it in the current event loop (async tests); ``testbed_thread`` runs it
in a background thread with its own loop (sync tests, and tests that start fairfetch as a
subprocess and point it at ``testbed.url(...)`` with the environment of ``testbed.env()``).
Both yield a :class:`~fairfetch.testbed.Testbed`; everything listens on 127.0.0.1 only.
"""

from __future__ import annotations

import asyncio
import ipaddress
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

from aiohttp import web

from fairfetch.testbed import FeedSpec, Gate, Testbed, TestbedClock, TestbedOptions

__all__ = [
    "FeedSpec", "Gate", "Testbed", "TestbedClock", "TestbedOptions", "loopback_server",
    "running_testbed", "testbed_thread",
]


@asynccontextmanager
async def running_testbed(
    seed: int = 1, *, port: int = 0, **options: Any
) -> AsyncIterator[Testbed]:
    """A testbed serving in the current event loop for the duration of the block."""
    testbed = Testbed(seed, port=port, **options)
    await testbed.start()
    try:
        yield testbed
    finally:
        await testbed.stop()


@asynccontextmanager
async def loopback_server(
    handler: Callable[[web.Request], Awaitable[web.StreamResponse]],
    *,
    address: str = "127.0.0.1",
) -> AsyncIterator[int]:
    """One HTTP server on 127.0.0.1 (an ephemeral port, yielded) answering every method and
    path with ``handler``, in the current event loop: for a test about one server behaviour
    the testbed has no switch for. Reach hosts on it with ``resolve=("*.test:127.0.0.1",)``.

    ``address``: another loopback address (127.0.0.0/8), for a server that must answer from
    an address of its own; anything else is refused (tests send traffic to loopback only)."""
    if not ipaddress.ip_address(address).is_loopback:
        raise ValueError(f"loopback_server: {address!r} is not a loopback address")
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handler)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, address, 0)
    await site.start()
    try:
        yield site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    finally:
        await runner.cleanup()


# The name starts with ``test`` because it is the public API, not a test function.
@contextmanager
def testbed_thread(
    seed: int = 1, *, port: int = 0, **options: Any  # noqa: PT028
) -> Iterator[Testbed]:
    """A testbed serving from a background thread (its own event loop) for the block.

    ``stats()`` is a coroutine of the testbed's loop; from the calling thread use
    ``testbed.snapshot()`` (or the control endpoints over HTTP).
    """
    testbed = Testbed(seed, port=port, **options)
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    failure: list[BaseException] = []

    def serve() -> None:
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(testbed.start())
        except BaseException as exc:
            failure.append(exc)
            ready.set()
            return
        ready.set()
        loop.run_forever()
        loop.run_until_complete(testbed.stop())
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()

    thread = threading.Thread(target=serve, name="fairfetch-testbed", daemon=True)
    thread.start()
    ready.wait()
    if failure:
        thread.join()
        loop.close()
        raise failure[0]
    try:
        yield testbed
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join()


# Keep pytest from collecting the helper as a test when a test module imports it.
testbed_thread.__test__ = False  # type: ignore[attr-defined]
