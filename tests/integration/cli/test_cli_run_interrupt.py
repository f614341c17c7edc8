"""``fairfetch run`` on Ctrl-C: says it is stopping (the crawl's fetches in flight end or time
out first), and a second Ctrl-C stops it at once (exit 130, as after a kill: nothing is lost).
Every Ctrl-C was swallowed until the pass ended: with a server that never answers, three
Ctrl-C left it running, silent, for ``total_timeout`` (here an hour; the waits below are hang
guards, not measurements)."""

from __future__ import annotations

from pathlib import Path

from .test_cli_crawl_once_interrupt import (  # noqa: F401 (server: the fixture)
    _SilentServer,
    interrupt_twice,
    server,
)


def test_cli_run_says_it_is_stopping_and_a_second_ctrl_c_stops_it_now(
    server: _SilentServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    returncode, said = interrupt_twice(
        server, tmp_path, "run", "--host", "127.0.0.1", "--port", "0"
    )
    assert returncode == 130
    assert not any("Traceback" in line for line in said), said
