"""``fairfetch serve`` (the directory) and ``fairfetch run`` (crawler + notifier + web)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated

import typer

from fairfetch.cli._app import (
    app,
    console,
    globals_of,
    open_store_at,
    say_stopping,
    second_ctrl_c_exits,
)
from fairfetch.config import Settings
from fairfetch.errors import ConfigError


@contextmanager
def _startup_failure_is_an_error(host: str, port: int) -> Iterator[None]:
    """uvicorn answers a port it cannot bind with ``sys.exit(3)`` (after logging why): that is
    a bad --host/--port, reported like every other bad input, not a bare exit status."""
    try:
        yield
    except SystemExit as exc:
        if exc.code in (None, 0):
            raise
        raise ConfigError(
            f"could not serve on {host}:{port} (address in use or not available here)"
        ) from None


def _refuse_an_unusable_address(host: str, port: int) -> None:
    """Bind the address as uvicorn will (IPv6 when the host has a colon, SO_REUSEADDR) before
    anything starts: uvicorn's own refusal ended in "could not serve on H:P (uvicorn exit 3)",
    the reason only in a log line above it and no word of the options that avoid it."""
    import socket

    if port == 0:
        return  # any free port: nothing to collide with
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            reason = exc.strerror or str(exc)
            raise ConfigError(
                f"cannot serve on {host}:{port} ({reason}); choose another port with --port "
                "(0: any free port), or another address with --host"
            ) from None


def _announce(url: str) -> None:
    console.print(f"fairfetch directory at [bold]{url}/[/bold]  (Ctrl-C to stop)", highlight=False)


async def _serve_only(settings: Settings, host: str, port: int) -> None:
    from fairfetch.stop_signals import install_stop_signals
    from fairfetch.web.serve import serve

    stop = asyncio.Event()
    install_stop_signals(stop, say_stopping)
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
    host, port = host or settings.host, settings.port if port is None else port
    _refuse_an_unusable_address(host, port)
    with second_ctrl_c_exits(), _startup_failure_is_an_error(host, port):
        asyncio.run(_serve_only(settings, host, port))


@app.command("run")
def run_command(
    ctx: typer.Context,
    host: Annotated[str | None, typer.Option("--host", help="Address to listen on")] = None,
    port: Annotated[
        int | None, typer.Option("--port", help="Port (0: any free port)", min=0, max=65535)
    ] = None,
) -> None:
    """The main job: crawler, notifier and the directory in one process."""
    from fairfetch.gctune import tune_for_crawling
    from fairfetch.web.serve import run_service

    settings = globals_of(ctx).settings()
    host, port = host or settings.host, settings.port if port is None else port
    _refuse_an_unusable_address(host, port)
    store = open_store_at(settings.db)
    tune_for_crawling()
    try:
        with second_ctrl_c_exits(), _startup_failure_is_an_error(host, port):
            run_service(
                settings, store, host=host, port=port, on_started=_announce,
                on_stopping=say_stopping,
            )
    finally:
        store.close()
