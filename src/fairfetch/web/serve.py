"""Serving the app with uvicorn inside an event loop someone else owns.

``fairfetch run`` puts the crawler, the notifier and the web server in one event loop; the web
server must therefore start and stop on an ``asyncio.Event`` like the others, not on its own
signal handlers (uvicorn's would swallow the Ctrl-C meant for the whole process).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Generator
from typing import Any

import uvicorn

from fairfetch.config import Settings
from fairfetch.errors import ConfigError
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


async def serve(
    settings: Settings,
    store: SqlStore,
    crawler: Any,
    stop: asyncio.Event,
    *,
    host: str,
    port: int,
    on_started: Callable[[str], None] | None = None,
) -> None:
    """Serve the directory until ``stop`` is set; ``on_started(url)`` once it listens."""
    app = create_app(settings, store, crawler)
    config = uvicorn.Config(
        app, host=host, port=port, log_level="warning", access_log=False, lifespan="off"
    )
    server = _Server(config)
    task = asyncio.create_task(server.serve(), name="fairfetch-web")
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
        stopper = asyncio.create_task(stop.wait())
        await asyncio.wait({task, stopper}, return_when=asyncio.FIRST_COMPLETED)
        stopper.cancel()
    finally:
        server.should_exit = True
        with contextlib.suppress(asyncio.CancelledError, SystemExit):
            await task
