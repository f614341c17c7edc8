"""Issue 2, "Crawl loop": "a rich progress bar on `crawl --once` (done/total, ok / not modified /
throttled / failed)".

No test looked at the bar: the CLI tests read the summary (or parse past "a progress line may
precede it"). Here `fairfetch crawl --once` runs as a user runs it, against the testbed, and the
bar's last state must give done/total and each outcome's count; `--json` must print no bar.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from fairfetch.crawl import utcnow
from fairfetch.net.politeness import politeness_key
from fairfetch.store import open_store
from fairfetch.testing import testbed_thread


def _crawl_once(db: str, env: dict[str, str], *extra: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "fairfetch", "--db", db, "crawl", "--once", *extra],
        env={**os.environ, **env, "COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _bar(out: str) -> str:
    [line] = [ln for ln in out.splitlines() if ln.startswith("crawl ")]
    return line


def test_acceptance_crawl_once_progress_bar_counts_every_outcome(tmp_path: Path) -> None:
    with testbed_thread(seed=3) as tb:
        blogs = tb.catalog(n=2, behaviours=["blog"])
        specs = blogs + tb.catalog(n=1, behaviours=["status-404"]) + tb.catalog(
            n=1, behaviours=["status-503-retry"])
        db = f"sqlite:///{tmp_path}/progress.db"
        store = open_store(db)
        try:
            for s in specs:
                store.add_feed(s.url, now=utcnow(), politeness_key=politeness_key(s.url))
        finally:
            store.close()

        bar = _bar(_crawl_once(db, tb.env()))
        assert re.search(r"\b4/4\b", bar), bar
        assert re.search(r"ok 2 · not modified 0 · throttled 1 · failed 1\b", bar), bar

        store = open_store(db)
        try:
            store.set_due([store.get_feed(s.url).id for s in blogs], utcnow())
        finally:
            store.close()
        bar = _bar(_crawl_once(db, tb.env()))
        assert re.search(r"\b2/2\b", bar), bar
        assert re.search(r"ok 0 · not modified 2 · throttled 0 · failed 0\b", bar), bar

        store = open_store(db)
        try:
            store.set_due([store.get_feed(s.url).id for s in blogs], utcnow())
        finally:
            store.close()
        out = _crawl_once(db, tb.env(), "--json")
        assert not any(ln.startswith("crawl ") for ln in out.splitlines())
        assert json.loads(out)["due"] == 2
