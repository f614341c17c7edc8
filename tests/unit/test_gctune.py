"""The collector settings for crawling: applied only when asked, and what they say."""

from __future__ import annotations

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
