"""Issue 2, "What must be shown": "killing `crawl` (SIGKILL) midway and running it again leaves no
duplicate entries and no feed stuck".

The crawl suite's SIGKILL test kills the process as soon as one held request arrives; measured
here, at that moment no feed had an entry written (0 of 70), so the rerun met a store that the
first run had not touched. Here the kill comes only once results are in the store and others are
not: the podcasts are held at the testbed, and the store is read until blogs are written.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from fairfetch.crawl import utcnow
from fairfetch.net.politeness import politeness_key
from fairfetch.store import open_store
from fairfetch.testing import testbed_thread


def _crawl(db: str, env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "fairfetch", "--db", db, "crawl", "--once", "--json"],
        env={**os.environ, **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def _entries_by_feed(path: Path) -> dict[str, int]:
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)
    try:
        return dict(con.execute(
            "SELECT f.url, count(e.id) FROM feeds f LEFT JOIN entries e ON e.feed_id = f.id "
            "GROUP BY f.url").fetchall())
    finally:
        con.close()


def _fed(path: Path) -> int:
    try:
        return sum(1 for n in _entries_by_feed(path).values() if n)
    except sqlite3.OperationalError:
        return 0  # a write holds the file this instant


def test_acceptance_sigkill_after_some_results_are_stored_then_rerun(tmp_path: Path) -> None:
    with testbed_thread(seed=3) as tb:
        blogs = tb.catalog(n=60, behaviours=["blog"])
        pods = tb.catalog(n=10, behaviours=["podcast"])
        specs = blogs + pods
        now = utcnow()
        paths = {name: tmp_path / f"{name}.db" for name in ("killed", "clean")}
        for path in paths.values():
            store = open_store(f"sqlite:///{path}")
            try:
                for s in specs:
                    store.add_feed(s.url, now=now, politeness_key=politeness_key(s.url))
            finally:
                store.close()
        env = tb.env()

        gate = tb.hold({s.host for s in pods})
        proc = _crawl(f"sqlite:///{paths['killed']}", env)
        try:
            gate.wait_arrived_blocking(1, timeout=60)
            # Poll the store (the crawl's own progress, as the audit resume test does): kill
            # once blogs are written while the held podcasts keep the pass from ending.
            deadline = time.monotonic() + 120
            while _fed(paths["killed"]) < 10:
                assert proc.poll() is None, "the crawl ended while podcasts were held"
                assert time.monotonic() < deadline, "no result was stored"
                time.sleep(0.005)
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            gate.open()
        assert proc.returncode == -signal.SIGKILL
        at_kill = _entries_by_feed(paths["killed"])
        fed = [u for u, n in at_kill.items() if n]
        assert 10 <= len(fed) < len(specs)  # truly midway: some stored, the podcasts not
        assert not any(at_kill[s.url] for s in pods)

        for path in paths.values():
            again = _crawl(f"sqlite:///{path}", env)
            _, err = again.communicate(timeout=120)
            assert again.returncode == 0, err.decode()

    assert _entries_by_feed(paths["killed"]) == _entries_by_feed(paths["clean"])
    con = sqlite3.connect(paths["killed"])
    try:
        dupes = con.execute(
            "SELECT count(*) FROM (SELECT 1 FROM entries GROUP BY feed_id, entry_id "
            "HAVING count(*) > 1)").fetchone()
        stuck = con.execute("SELECT url, status FROM feeds WHERE status != 'ok'").fetchall()
        undue = con.execute("SELECT url FROM feeds WHERE next_crawl_at IS NULL").fetchall()
    finally:
        con.close()
    assert dupes == (0,)
    assert stuck == []
    assert undue == []
