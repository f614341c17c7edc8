"""Every benchmark in turn, each in a process of its own: ``make bench``.

    .venv/bin/python bench/run_all.py [--only parse,crawl,...] [--list]

Each prints our figure next to its peer's from the same run and their ratio (see its own
docstring for what it measures and the goals it is held to). They share the machine with
nothing else of ours: run them on an idle machine, since absolute figures move with load and
ratios are what count. Traffic stays on 127.0.0.1.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: In the order of the issues they answer: parsing, the feed crawler, the audit, notifications,
#: WebSub, the directory's latency.
BENCHES = ("parse", "crawl", "audit", "notify", "websub", "web")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", default=",".join(BENCHES), help="comma-separated names to run")
    p.add_argument("--list", action="store_true", help="name the benchmarks and stop")
    a = p.parse_args()
    if a.list:
        print("\n".join(BENCHES))
        return 0
    chosen = [n.strip() for n in a.only.split(",") if n.strip()]
    unknown = [n for n in chosen if n not in BENCHES]
    if unknown:
        p.error(f"--only: unknown benchmark(s) {', '.join(unknown)} (known: {', '.join(BENCHES)})")
    failed = []
    for name in chosen:
        print(f"\n=== bench/{name}.py ===", flush=True)
        started = time.perf_counter()
        rc = subprocess.run([sys.executable, str(HERE / f"{name}.py")], check=False).returncode
        print(f"=== bench/{name}.py: exit {rc}, {time.perf_counter() - started:.0f} s ===",
              flush=True)
        if rc:
            failed.append(name)
    if failed:
        print(f"\nfailed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
