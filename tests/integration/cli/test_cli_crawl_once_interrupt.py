"""Ctrl-C stops ``crawl --once`` at once: fetches in flight are dropped, as after a kill (their
feeds stay due), not waited for. The command closed its crawler as on a normal end, so one
Ctrl-C left it waiting for every fetch in flight to finish or time out (``total_timeout``,
60 s by default; here an hour: the server never answers), saying nothing.

The process is its own (SIGINT reaches it as from a terminal); the bound on its wait is a hang
guard, not a measurement: with the bug it waits the hour."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from fairfetch.store import open_store


class _SilentServer:
    """Answers robots.txt with a 404, then holds the feed's request unanswered until the client
    closes the connection."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.feed_requested = threading.Event()
        self.client_gave_up = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            request = b""
            while b"\r\n\r\n" not in request:
                chunk = conn.recv(4096)
                if not chunk:
                    return
                request += chunk
            if request.startswith(b"GET /robots.txt"):
                conn.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n"
                             b"Connection: close\r\n\r\n")
                return
            self.feed_requested.set()
            while conn.recv(4096):  # until the client closes (recv returns b"")
                pass
            self.client_gave_up.set()

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def server() -> Iterator[_SilentServer]:
    s = _SilentServer()
    try:
        yield s
    finally:
        s.close()


def test_cli_crawl_once_stops_on_ctrl_c_without_waiting_for_fetches(
    server: _SilentServer, tmp_path: Path
) -> None:
    db = f"sqlite:///{tmp_path}/int.db"
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
        [sys.executable, "-m", "fairfetch", "--db", db, "crawl", "--once"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path,
        # as from a terminal (a background job would inherit SIGINT ignored)
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        assert server.feed_requested.wait(60), "the feed was never requested"
        proc.send_signal(signal.SIGINT)
        try:
            _, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            pytest.fail("one Ctrl-C did not stop crawl --once: it waited for the fetch")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode != 0  # interrupted, not a finished pass
    assert "Traceback" not in err
    assert server.client_gave_up.wait(60)  # the fetch in flight was dropped
    store = open_store(db)
    try:
        [feed] = store.list_feeds()
        assert feed.status == "new"  # nothing about the feed was written: it stays due
    finally:
        store.close()


def interrupt_twice(server: _SilentServer, tmp_path: Path, *command: str) -> tuple[int, list[str]]:
    """Run ``fairfetch --db … COMMAND`` over one feed whose server never answers, send Ctrl-C
    once the feed is asked for (the first must be said to stop, the process still ending its
    work), then again; (exit status, stderr lines). The waits are hang guards."""
    db = f"sqlite:///{tmp_path}/ever.db"
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
        [sys.executable, "-m", "fairfetch", "--db", db, *command],
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
            pytest.fail(f"a second Ctrl-C did not stop {command[0]}")
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        reader.join(10)
    return proc.returncode, said


def test_cli_crawl_for_ever_says_it_is_stopping_and_a_second_ctrl_c_stops_it_now(
    server: _SilentServer, tmp_path: Path
) -> None:
    """``fairfetch crawl`` (for ever) ends the pass under way on Ctrl-C, its fetches finishing or
    timing out: that is said, and a second Ctrl-C stops at once. Both were swallowed: with the
    server silent, three Ctrl-C left it running, silent, until the fetch timed out."""
    returncode, said = interrupt_twice(server, tmp_path, "crawl")
    assert returncode == 130
    assert not any("Traceback" in line for line in said), said
