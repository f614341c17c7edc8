"""Issue 7, "Outputs": "A progress bar while crawling (pages done, queue, externals pending)".

The audit tests read the crawler's progress callback (throttle waits); none ran `fairfetch audit
crawl` and looked at the bar. Here the command runs as a user runs it, on the testbed's site; the
bar's last state must count every page of the crawl file, with the queue and the externals
pending both drained, and `--quiet` must print no bar.
"""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

from fairfetch.testing import testbed_thread


def _audit(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "fairfetch", "audit", "crawl", *args],
        env={**os.environ, **env, "COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_acceptance_audit_crawl_progress_bar_pages_queue_externals(tmp_path: Path) -> None:
    with testbed_thread(seed=1) as tb:
        url = tb.url("s40.acme-audit.test", "/")
        out = _audit(tb.env(), url, "--out", str(tmp_path / "a.db"))
        quiet = _audit(tb.env(), url, "--out", str(tmp_path / "q.db"), "--quiet")
    [bar] = [ln for ln in out.splitlines() if ln.startswith("audit ")]
    m = re.search(r"\b(\d+)/(\d+) queue (\d+) · externals pending (\d+)\b", bar)
    assert m, bar
    done, total, queue, pending = map(int, m.groups())
    pages = sqlite3.connect(tmp_path / "a.db").execute(
        "SELECT COUNT(*) FROM pages WHERE state = 'done'").fetchone()[0]
    assert done == total == pages > 0
    assert (queue, pending) == (0, 0)
    assert f"{pages} pages" in out
    assert not any(ln.startswith("audit ") for ln in quiet.splitlines())
