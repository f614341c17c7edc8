"""``crawl --max N`` and ``crawl --json`` belong to one pass (``--once``).

Without ``--once`` they were silently ignored: ``fairfetch crawl --max 5`` crawled every due feed,
for ever, and ``crawl --json`` never printed any JSON. Each is now refused up front, naming the
option, before anything is crawled.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.parametrize(("args", "named"), [(["--max", "5"], "--max"), (["--json"], "--json")])
def test_cli_crawl_pass_options_need_once(args: list[str], named: str, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FAIRFETCH_")}
    # A process of its own: with the bug it runs for ever, and the bound ends the test.
    proc = subprocess.run(
        [sys.executable, "-m", "fairfetch", "--db", f"sqlite:///{tmp_path}/c.db", "crawl", *args],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    assert named in proc.stderr
    assert "--once" in proc.stderr


def test_cli_crawl_pass_options_with_once_still_work(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FAIRFETCH_")}
    proc = subprocess.run(
        [sys.executable, "-m", "fairfetch", "--db", f"sqlite:///{tmp_path}/c.db", "crawl",
         "--once", "--max", "5", "--json"],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert '"due": 0' in proc.stdout
