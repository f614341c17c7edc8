"""The collector settings for crawling: applied only when asked, and what they say."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def test_importing_fairfetch_leaves_the_collector_alone() -> None:
    code = (
        "import gc; before = gc.get_threshold(); import fairfetch, fairfetch.crawl, "
        "fairfetch.gctune; assert gc.get_threshold() == before, gc.get_threshold(); "
        "assert gc.get_freeze_count() == 0"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_tuning_freezes_start_up_and_raises_the_thresholds() -> None:
    code = (
        "import gc; from fairfetch.gctune import GC_THRESHOLDS, tune_for_crawling; "
        "tune_for_crawling(); assert gc.get_threshold() == GC_THRESHOLDS; "
        "assert gc.get_freeze_count() > 1000"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_crawl_command_tunes_before_its_work(tmp_path: Path) -> None:
    """`crawl --once` on an empty directory: nothing is fetched, the collector is tuned."""
    code = (
        "import gc; from fairfetch.cli import app; from fairfetch.gctune import GC_THRESHOLDS; "
        f"app(['--db', 'sqlite:///{tmp_path}/t.db', 'crawl', '--once', '--json'], "
        "standalone_mode=False); assert gc.get_threshold() == GC_THRESHOLDS, gc.get_threshold()"
    )
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)


def _after_command(args: list[str]) -> str:
    """Run a CLI command in a fresh interpreter; print the collector's thresholds after it."""
    code = (
        "import gc, sys; from fairfetch.cli import app\n"
        "try:\n"
        f"    app({args!r}, standalone_mode=False)\n"
        "except Exception as exc:\n"
        "    print('raised', type(exc).__name__, file=sys.stderr)\n"
        "print(gc.get_threshold())\n"
    )
    env = {**os.environ, "FAIRFETCH_ALLOW_NETWORKS": "127.0.0.1/32"}
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True, env=env
    ).stdout
    return out.strip().splitlines()[-1]


def test_audit_crawl_command_tunes_before_its_work(tmp_path: Path) -> None:
    """A site on a loopback address that is not allowed: refused by the perimeter, no
    connection made; the collector was tuned for the crawl (and its writer process, forked
    from it) before the first fetch."""
    from fairfetch.gctune import GC_THRESHOLDS

    args = ["audit", "crawl", "http://127.0.0.2:9/", "--out", str(tmp_path / "c.db"), "-q"]
    assert _after_command(args) == str(GC_THRESHOLDS)


def test_audit_report_and_export_tune_before_their_work(tmp_path: Path) -> None:
    """Reading a crawl file builds an object per page and per finding, all kept to the end:
    the default thresholds re-walk them over and over (~6 % of `audit report` at 10k pages)."""
    from fairfetch.audit.crawlfile import CrawlFile
    from fairfetch.gctune import GC_THRESHOLDS

    path = tmp_path / "c.db"
    CrawlFile(path).close()
    assert _after_command(["audit", "report", str(path), "--json"]) == str(GC_THRESHOLDS)
    out = ["audit", "export", str(path), "--csv", str(tmp_path / "csv")]
    assert _after_command(out) == str(GC_THRESHOLDS)
