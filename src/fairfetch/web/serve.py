"""Serving the app with uvicorn inside an event loop someone else owns.

``fairfetch run`` puts the crawler, the notifier and the web server in one event loop; the web
server must therefore start and stop on an ``asyncio.Event`` like the others, not on its own
signal handlers (uvicorn's would swallow the Ctrl-C meant for the whole process).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
from collections.abc import Awaitable, Callable, Generator
from datetime import UTC, datetime, timedelta
from typing import Any

import uvicorn

from fairfetch.config import Settings
from fairfetch.errors import ConfigError, FairfetchError
from fairfetch.stop_signals import install_stop_signals
from fairfetch.store.sql import SqlStore
from fairfetch.web.app import create_app


class _Server(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield  # the caller owns the signals and sets ``stop``


def bound_url(server: uvicorn.Server) -> str:
    """The base URL the server actually listens on (port 0 resolved)."""
    for srv in server.servers:
        for sock in srv.sockets:
            host, port = sock.getsockname()[:2]
            if ":" in host:
                host = f"[{host}]"
            return f"http://{host}:{port}"
    raise RuntimeError("server is not listening")


def _warm(app: Any) -> None:
    from datetime import UTC, datetime

    ctx = app.state.fairfetch
    with contextlib.suppress(Exception):  # a cold cache is only slower, never wrong
        ctx.minutes.minutes(ctx.store, datetime.now(UTC))


async def serve(
    settings: Settings,
    store: SqlStore,
    crawler: Any,
    stop: asyncio.Event,
    *,
    host: str,
    port: int,
    on_started: Callable[[str], None] | None = None,
    websub: Any = None,
) -> None:
    """Serve the directory until ``stop`` is set; ``on_started(url)`` once it listens.
    ``websub``: the WebSubService the push callback shares with the upkeep (under ``run``)."""
    app = create_app(settings, store, crawler)
    if websub is not None:
        app.state.websub = websub
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        access_log=False,
        lifespan="off",
        # On stop, a request in flight may finish its fetch (capped by total_timeout), then
        # is cancelled: without a bound, one request that never returns kept the process
        # running through every Ctrl-C.
        timeout_graceful_shutdown=math.ceil(settings.total_timeout) + 1,
    )
    server = _Server(config)
    async def _serve() -> None:
        # uvicorn calls sys.exit(3) when it cannot bind; that must be our error, not a
        # SystemExit tearing through the event loop that also runs the crawler.
        try:
            await server.serve()
        except SystemExit as exc:
            detail = f"uvicorn exit {exc.code}"
            raise ConfigError(f"could not serve on {host}:{port} ({detail})") from None

    task = asyncio.create_task(_serve(), name="fairfetch-web")
    try:
        while not server.started:
            if task.done():
                break
            await asyncio.sleep(0.01)  # uvicorn exposes no "started" event to wait on
        if task.done():
            exc = task.exception() if not task.cancelled() else None
            raise ConfigError(
                f"could not serve on {host}:{port}"
                + (f" ({type(exc).__name__}: {exc})" if exc else "")
            )
        if on_started is not None:
            on_started(bound_url(server))
        # Read the day of crawl minutes for /crawlstats now, off the loop, rather than on the
        # first visitor's request.
        warm = asyncio.create_task(asyncio.to_thread(_warm, app))
        stopper = asyncio.create_task(stop.wait())
        await asyncio.wait({task, stopper}, return_when=asyncio.FIRST_COMPLETED)
        stopper.cancel()
        with contextlib.suppress(Exception):
            await warm
    finally:
        server.should_exit = True
        with contextlib.suppress(asyncio.CancelledError, SystemExit):
            await task


def _notifier() -> Callable[[SqlStore, Settings, asyncio.Event], Awaitable[None]] | None:
    """The notify job's service loop, when that job is installed."""
    try:
        from fairfetch.notify.service import run_forever
    except ImportError:
        return None
    return run_forever


log = logging.getLogger(__name__)

#: Seconds between two prunings of the logs by ``run`` (the first comes at start).
PRUNE_EVERY = 24 * 3600.0


async def prune_forever(
    store: SqlStore,
    settings: Settings,
    stop: asyncio.Event,
    *,
    every: float = PRUNE_EVERY,
    clock: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> None:
    """Delete log rows older than ``log_retention_days`` at start, then once a ``every``.

    A pruning the database refuses (SQLite kept busy past its timeout) is logged and tried
    again next time: it must not stop the crawler and the web with it."""
    from fairfetch.store.retention import prune_logs

    while True:
        days = settings.log_retention_days
        if days:
            try:
                gone = await asyncio.to_thread(
                    prune_logs, store, clock() - timedelta(days=days)
                )
            except FairfetchError as exc:
                log.warning("pruning old logs failed (next try in %.0f s): %s", every, exc)
            else:
                if any(gone.values()):
                    log.info("pruned logs older than %g days: %s", days, gone)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=every)
        if stop.is_set():
            return


async def run_all(
    settings: Settings,
    store: SqlStore,
    stop: asyncio.Event,
    *,
    host: str,
    port: int,
    on_started: Callable[[str], None] | None = None,
) -> None:
    """Crawler, notifier (if installed) and web in this event loop until ``stop`` is set.

    If any part fails, the others are stopped and the failure is raised: a half-running
    service that looks alive is worse than one that stopped.
    """
    from fairfetch.crawl import Crawler
    from fairfetch.websub.service import WebSubService
    from fairfetch.websub.service import run_forever as websub_forever

    crawler = Crawler(store, settings)
    # One WebSub service for the push callback and the upkeep (subscribe feeds that advertise
    # a hub, renew leases, unsubscribe removed or dead feeds, process queued pings through
    # this process's crawler): one delivery processor, one set of politeness slots.
    websub = WebSubService(store, settings, crawler=crawler)
    listening = asyncio.Event()

    def started(url: str) -> None:
        listening.set()
        if on_started is not None:
            on_started(url)

    web = asyncio.ensure_future(
        serve(settings, store, crawler, stop, host=host, port=port, on_started=started,
              websub=websub)
    )  # fmt: skip
    tasks = [web]
    try:
        # The rest starts once the web listens: started together, the crawler's first pass
        # fetched every due feed (and the notifier mailed) while a taken port failed the start.
        if not await _listening(web, listening):
            return
        parts: list[Awaitable[None]] = [crawler.run_forever(stop)]
        notify = _notifier()
        if notify is not None:
            parts.append(notify(store, settings, stop))
        parts.append(websub_forever(store, settings, stop, service=websub))
        parts.append(prune_forever(store, settings, stop))
        tasks += [asyncio.ensure_future(p) for p in parts]
        await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
        stop.set()
        await asyncio.gather(*tasks, return_exceptions=True)
        for t in tasks:
            exc = None if t.cancelled() else t.exception()
            if exc is not None:
                raise exc
    finally:
        stop.set()
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        with contextlib.suppress(Exception):
            await crawler.aclose()


async def _listening(web: asyncio.Future[None], listening: asyncio.Event) -> bool:
    """Whether the web listens; False when it ended first (stopped before it was up). A web
    that could not start raises its error here."""
    waiter: asyncio.Future[Any] = asyncio.ensure_future(listening.wait())
    try:
        await asyncio.wait({web, waiter}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        waiter.cancel()
    if listening.is_set():
        return True
    web.result()  # raises what stopped it
    return False


def run_service(
    settings: Settings,
    store: SqlStore,
    *,
    host: str,
    port: int,
    on_started: Callable[[str], None] | None = None,
    on_stopping: Callable[[], None] | None = None,
) -> None:
    """``fairfetch run`` as a blocking call (the demo uses it): until SIGINT or SIGTERM (see
    :func:`install_stop_signals`; a second SIGINT raises KeyboardInterrupt)."""

    async def main() -> None:
        stop = asyncio.Event()
        install_stop_signals(stop, on_stopping)
        await run_all(settings, store, stop, host=host, port=port, on_started=on_started)

    asyncio.run(main())
