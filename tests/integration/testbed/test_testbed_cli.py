"""``fairfetch testbed`` serves until interrupted and tells the user how to reach it."""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest


def test_cli_serves_prints_settings_and_stops_on_interrupt() -> None:
    exe = Path(sys.executable).parent / "fairfetch"
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "200"}
    proc = subprocess.Popen(
        [str(exe), "testbed", "--port", "0", "--seed", "4"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )
    try:
        assert proc.stdout is not None
        printed = []
        for line in proc.stdout:
            printed.append(line)
            if line.startswith("Ctrl-C"):
                break
        text = "".join(printed)
        assert "FAIRFETCH_RESOLVE='*.test:127.0.0.1'" in text
        assert "FAIRFETCH_ALLOW_NETWORKS=127.0.0.1/32" in text
        match = re.search(r"http://control\.test:(\d+)/_testbed/stats", text)
        assert match, text
        port = int(match.group(1))
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request("GET", "/_testbed/stats", headers={"Host": f"control.test:{port}"})
        resp = conn.getresponse()
        assert resp.status == 200
        assert "total" in json.loads(resp.read())
        conn.close()
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_cli_testbed_started_in_the_background_stops_on_a_signal(sig: signal.Signals) -> None:
    """A non-interactive shell's ``fairfetch testbed &`` inherits SIGINT ignored, and SIGTERM
    (``kill``) ended it without its clean-up: it stops on either, as serve and run do."""
    exe = Path(sys.executable).parent / "fairfetch"
    proc = subprocess.Popen(
        [str(exe), "testbed", "--port", "0"], stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"},
        preexec_fn=_ignore_sigint,
    )
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith("Ctrl-C"):
                break
        proc.send_signal(sig)
        assert proc.wait(timeout=20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
