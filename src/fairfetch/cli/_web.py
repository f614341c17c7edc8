"""``fairfetch serve`` (the directory) and ``fairfetch run`` (crawler + notifier + web)."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

import typer

from fairfetch.cli._app import app, console, globals_of
from fairfetch.config import Settings


def _install_stop(stop: asyncio.Event) -> None:
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)


def _announce(url: str) -> None:
    console.print(f"fairfetch directory at [bold]{url}/[/bold]  (Ctrl-C to stop)", highlight=False)


def _notifier() -> Callable[[Any, Settings, asyncio.Event], Awaitable[None]] | None:
    """The notify job's service loop, when that job is installed."""
    try:
        from fairfetch.notify.service import run_forever
    except ImportError:
        return None
    return run_forever


async def _serve_only(settings: Settings, host: str, port: int) -> None:
    from fairfetch.store import open_store
    from fairfetch.web.serve import serve

    stop = asyncio.Event()
    _install_stop(stop)
    store = await asyncio.to_thread(open_store, settings.db)
    try:
        await serve(settings, store, None, stop, host=host, port=port, on_started=_announce)
    finally:
        store.close()


async def run_all(
    settings: Settings,
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
    from fairfetch.store import open_store
    from fairfetch.web.serve import serve

    store = await asyncio.to_thread(open_store, settings.db)
    crawler = Crawler(store, settings)
    parts: list[Awaitable[None]] = [
        crawler.run_forever(stop),
        serve(settings, store, crawler, stop, host=host, port=port, on_started=on_started),
    ]
    notify = _notifier()
    if notify is not None:
        parts.append(notify(store, settings, stop))
    tasks = [asyncio.ensure_future(p) for p in parts]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
        stop.set()
        await asyncio.gather(*tasks, return_exceptions=True)
        for t in tasks:
            if not t.cancelled() and t.exception() is not None:
                raise t.exception()  # type: ignore[misc]
    finally:
        stop.set()
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        store.close()


@app.command("serve")
def serve_command(
    ctx: typer.Context,
    host: Annotated[str | None, typer.Option("--host", help="Address to listen on")] = None,
    port: Annotated[int | None, typer.Option("--port", help="Port (0: any free port)")] = None,
) -> None:
    """Serve the directory (pages, JSON API, /crawlstats, /metrics) without crawling."""
    settings = globals_of(ctx).settings()
    asyncio.run(
        _serve_only(settings, host or settings.host, settings.port if port is None else port)
    )


@app.command("run")
def run_command(
    ctx: typer.Context,
    host: Annotated[str | None, typer.Option("--host", help="Address to listen on")] = None,
    port: Annotated[int | None, typer.Option("--port", help="Port (0: any free port)")] = None,
) -> None:
    """The main job: crawler, notifier and the directory in one process."""
    settings = globals_of(ctx).settings()

    async def main() -> None:
        stop = asyncio.Event()
        _install_stop(stop)
        await run_all(
            settings,
            stop,
            host=host or settings.host,
            port=settings.port if port is None else port,
            on_started=_announce,
        )

    asyncio.run(main())
