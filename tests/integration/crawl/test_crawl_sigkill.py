"""Killing `crawl --once` (SIGKILL) midway, then running it again, leaves no duplicate entries
and no feed stuck: the store holds no claim that a dead process could leave behind, and every
write is one transaction."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

from fairfetch.crawl import utcnow
from fairfetch.net.politeness import politeness_key
from fairfetch.store import open_store
from fairfetch.testing import testbed_thread


def _run(db: str, env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "fairfetch", "--db", db, "crawl", "--once", "--json"],
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def _counts(path: Path) -> dict[str, int]:
    with sqlite3.connect(path) as conn:
        return dict(
            conn.execute(
                "SELECT f.url, count(e.id) FROM feeds f LEFT JOIN entries e "
                "ON e.feed_id = f.id GROUP BY f.url"
            ).fetchall()
        )


def test_sigkill_midway_then_rerun(tmp_path: Path) -> None:
    with testbed_thread(seed=3) as tb:
        blogs = tb.catalog(n=60, behaviours=["blog"])
        pods = tb.catalog(n=10, behaviours=["podcast"])
        specs = blogs + pods
        db_path = tmp_path / "killed.db"
        db = f"sqlite:///{db_path}"
        store = open_store(db)
        now = utcnow()
        for s in specs:
            store.add_feed(s.url, now=now, politeness_key=politeness_key(s.url))
        store.close()
        env = tb.env()

        gate = tb.hold({s.host for s in pods})
        proc = _run(db, env)
        try:
            gate.wait_arrived_blocking(1, timeout=60)  # the crawl is mid-flight
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            gate.open()
        assert proc.returncode == -signal.SIGKILL

        second = _run(db, env)
        _out, err = second.communicate(timeout=120)
        assert second.returncode == 0, err.decode()

        # A clean run over the same feeds, for comparison.
        clean_path = tmp_path / "clean.db"
        clean = open_store(f"sqlite:///{clean_path}")
        for s in specs:
            clean.add_feed(s.url, now=now, politeness_key=politeness_key(s.url))
        clean.close()
        third = _run(f"sqlite:///{clean_path}", env)
        _, err3 = third.communicate(timeout=120)
        assert third.returncode == 0, err3.decode()

    killed = _counts(db_path)
    assert killed == _counts(clean_path)
    with sqlite3.connect(db_path) as conn:
        assert conn.execute(
            "SELECT count(*) FROM (SELECT 1 FROM entries GROUP BY feed_id, "
            "entry_id HAVING count(*) > 1)"
        ).fetchone() == (0,)
        stuck = conn.execute("SELECT url, status FROM feeds WHERE status != 'ok'").fetchall()
    assert stuck == []
