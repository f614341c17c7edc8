"""``fairfetch serve`` (the directory) and ``fairfetch run`` (crawler + notifier + web)."""

from __future__ import annotations

import asyncio
from typing import Annotated

import typer

from fairfetch.cli._app import app, console, globals_of, open_store_at
from fairfetch.config import Settings


def _announce(url: str) -> None:
    console.print(f"fairfetch directory at [bold]{url}/[/bold]  (Ctrl-C to stop)", highlight=False)


async def _serve_only(settings: Settings, host: str, port: int) -> None:
    from fairfetch.web.serve import install_stop_signals, serve

    stop = asyncio.Event()
    install_stop_signals(stop)
    store = await asyncio.to_thread(open_store_at, settings.db)
    try:
        await serve(settings, store, None, stop, host=host, port=port, on_started=_announce)
    finally:
        store.close()


@app.command("serve")
def serve_command(
    ctx: typer.Context,
    host: Annotated[str | None, typer.Option("--host", help="Address to listen on")] = None,
    port: Annotated[
        int | None, typer.Option("--port", help="Port (0: any free port)", min=0, max=65535)
    ] = None,
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
    port: Annotated[
        int | None, typer.Option("--port", help="Port (0: any free port)", min=0, max=65535)
    ] = None,
) -> None:
    """The main job: crawler, notifier and the directory in one process."""
    from fairfetch.web.serve import run_service

    settings = globals_of(ctx).settings()
    store = open_store_at(settings.db)
    try:
        run_service(
            settings,
            store,
            host=host or settings.host,
            port=settings.port if port is None else port,
            on_started=_announce,
        )
    finally:
        store.close()
