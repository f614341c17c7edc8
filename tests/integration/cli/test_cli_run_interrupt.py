"""``fairfetch run`` on Ctrl-C: says it is stopping (the crawl's fetches in flight end or time
out first), and a second Ctrl-C stops it at once (exit 130, as after a kill: nothing is lost).
Every Ctrl-C was swallowed until the pass ended: with a server that never answers, three
Ctrl-C left it running, silent, for ``total_timeout`` (here an hour; the waits below are hang
guards, not measurements)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest

from fairfetch.store import open_store

from .test_cli_crawl_once_interrupt import _SilentServer, server  # noqa: F401 (fixture)


def test_cli_run_says_it_is_stopping_and_a_second_ctrl_c_stops_it_now(
    server: _SilentServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    db = f"sqlite:///{tmp_path}/run.db"
    store = open_store(db)
    try:
        store.add_feed(f"http://127.0.0.1:{server.port}/feed", now=datetime.now(UTC),
                       politeness_key="127.0.0.1")
    finally:
        store.close()
    env = {k: v for k, v in os.environ.items() if not k.startswith("FAIRFETCH_")}
    env.update(FAIRFETCH_ALLOW_NETWORKS="127.0.0.1/32", FAIRFETCH_TOTAL_TIMEOUT="3600",
               FAIRFETCH_FIRST_BYTE_TIMEOUT="3600")
    proc = subprocess.Popen(
        [sys.executable, "-m", "fairfetch", "--db", db, "run", "--host", "127.0.0.1",
         "--port", "0"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    said: list[str] = []
    stopping = threading.Event()

    def read_stderr() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            said.append(line)
            if "Ctrl-C again" in line:
                stopping.set()

    reader = threading.Thread(target=read_stderr, daemon=True)
    reader.start()
    try:
        assert server.feed_requested.wait(60), "the feed was never requested"
        proc.send_signal(signal.SIGINT)
        assert stopping.wait(60), f"the first Ctrl-C said nothing: {said}"
        assert proc.poll() is None  # still ending its pass
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            pytest.fail("a second Ctrl-C did not stop run")
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        reader.join(10)
    assert proc.returncode == 130
    assert not any("Traceback" in line for line in said), said
