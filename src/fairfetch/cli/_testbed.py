"""``fairfetch testbed``: serve the simulated web until interrupted."""

from __future__ import annotations

import asyncio
import contextlib
import math
import signal
from typing import Annotated

import typer

from fairfetch.cli._app import app, console
from fairfetch.errors import ConfigError, InputError


@app.command("testbed")
def run_testbed(
    port: Annotated[
        int, typer.Option("--port", help="Loopback port (0: any free port)", min=0, max=65535)
    ] = 8800,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the simulated web")] = 1,
    letterbox_rate: Annotated[
        float, typer.Option("--letterbox-rate", help="Letterbox platform limit, requests/s")
    ] = 20.0,
    latency: Annotated[
        float, typer.Option("--latency", help="Seconds each answer waits (simulated round trip)")
    ] = 0.0,
) -> None:
    """Serve the deterministic simulated web (thousands of *.test hosts) on 127.0.0.1."""
    from fairfetch.testbed import CONTROL_HOST, Testbed

    for option, value in (("--letterbox-rate", letterbox_rate), ("--latency", latency)):
        # Checked here: click's ranges let nan through, and the server would take it.
        if not (math.isfinite(value) and value >= 0):
            raise InputError(option, f"must be a finite number of at least 0 (got {value})")

    async def serve() -> None:
        testbed = Testbed(
            seed, port=port, realtime=True, letterbox_rate=letterbox_rate, latency=latency
        )
        try:
            await testbed.start()
        except OSError as exc:
            raise ConfigError(
                f"testbed: cannot listen on 127.0.0.1:{port} ({exc.strerror})"
            ) from None
        try:
            p = testbed.base_port
            lines = [
                f"testbed serving {len(testbed.catalog())} feeds on http://127.0.0.1:{p}/ "
                f"(seed {seed})",
                f"control: http://{CONTROL_HOST}:{p}/_testbed/stats",
                f"catalogue: http://{CONTROL_HOST}:{p}/_testbed/catalog.opml",
                "reach it with:",
                "  export FAIRFETCH_RESOLVE='*.test:127.0.0.1'",
                "  export FAIRFETCH_ALLOW_NETWORKS=127.0.0.1/32",
                f"  curl --resolve control.test:{p}:127.0.0.1 "
                f"http://{CONTROL_HOST}:{p}/_testbed/catalog.opml",
                "Ctrl-C to stop.",
            ]
            for line in lines:
                console.print(line, soft_wrap=True, highlight=False, markup=False)
            console.file.flush()
            await stop.wait()
        finally:
            await testbed.stop()

    # Stopped by SIGINT or SIGTERM, as serve and run are, also when started in the background
    # (a non-interactive shell's `fairfetch testbed &` inherits SIGINT ignored).
    stop = asyncio.Event()

    async def main() -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        await serve()

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(main())
