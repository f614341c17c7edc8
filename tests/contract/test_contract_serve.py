"""`serve`, `run`, `testbed` and `demo` as processes: each says where it listens, answers there
(loopback), and stops cleanly on a signal."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

URL = re.compile(r"http://127\.0\.0\.1:(\d+)/")


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FAIRFETCH_")}
    env.update({"FAIRFETCH_DB": f"sqlite:///{tmp_path}/serve.db", "COLUMNS": "200", **extra})
    return env


@contextmanager
def _process(args: list[str], env: dict[str, str], cwd: Path) -> Iterator[subprocess.Popen[str]]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "fairfetch", *args], stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True, env=env, cwd=cwd,
    )  # fmt: skip
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)
        assert proc.stdout is not None
        proc.stdout.close()


def _port_from(proc: subprocess.Popen[str], marker: str) -> int:
    """Read the output until the line that names the URL (the process blocks on nothing else)."""
    assert proc.stdout is not None
    seen = []
    for line in proc.stdout:
        seen.append(line)
        found = URL.search(line)
        if marker in line and found:
            return int(found.group(1))
    raise AssertionError("no URL announced:\n" + "".join(seen))


def _stop(proc: subprocess.Popen[str], sig: int) -> int:
    proc.send_signal(sig)
    return proc.wait(timeout=60)


@pytest.mark.parametrize("command", ["serve", "run"])
def test_serve_and_run_listen_where_they_say_and_stop_on_sigterm(
    command: str, tmp_path: Path
) -> None:
    env = _env(tmp_path, FAIRFETCH_SMTP_URL="smtp://127.0.0.1:9")
    with _process([command, "--host", "127.0.0.1", "--port", "0"], env, tmp_path) as proc:
        port = _port_from(proc, "fairfetch directory")
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
            assert client.get("/").status_code == 200
            assert client.get("/crawlstats").status_code == 200
        assert _stop(proc, signal.SIGTERM) == 0
    # the schema was created on first use
    assert (tmp_path / "serve.db").exists()


def test_testbed_serves_its_catalogue_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    with _process(["testbed", "--port", "0"], _env(tmp_path), tmp_path) as proc:
        port = _port_from(proc, "testbed serving")
        r = httpx.get(f"http://127.0.0.1:{port}/_testbed/catalog.opml",
                      headers={"Host": f"control.test:{port}"}, timeout=30)  # fmt: skip
        assert r.status_code == 200
        assert b"<opml" in r.content
        assert _stop(proc, signal.SIGINT) == 0


def test_serve_on_a_port_in_use_is_a_clear_error(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = subprocess.run(
            [sys.executable, "-m", "fairfetch", "serve", "--port", str(port)],
            capture_output=True, text=True, env=_env(tmp_path), cwd=tmp_path, timeout=60,
        )  # fmt: skip
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert str(port) in proc.stderr


def test_demo_crawls_a_fresh_database_and_prints_the_url(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    args = ["--db", f"sqlite:///{tmp_path}/demo.db", "demo", "--feeds", "4", "--port", str(port)]
    with _process(args, _env(tmp_path), tmp_path) as proc:
        assert _port_from(proc, "Open") == port
        # the URL is printed once it is served
        assert httpx.get(f"http://127.0.0.1:{port}/", timeout=30).status_code == 200
        assert _stop(proc, signal.SIGINT) == 0
