"""Feed-crawl benchmark: fairfetch against `reader` and a plain requests+feedparser loop.

Same feeds (blogs of the testbed: 1,000+ feeds over as many hosts), same run, same machine. The
testbed runs in its own process; each contender runs in its own process too, so its peak RSS is
its own. Peers resolve ``*.test`` to 127.0.0.1 through a patched ``socket.getaddrinfo`` (the
equivalent of our ``FAIRFETCH_RESOLVE``): no traffic leaves loopback.

Prints, per contender: feeds/s on a first crawl (full fetches) and ours on a second crawl (the
304 path), peak RSS, and the ratios. Politeness violations are read from the testbed's own
counters (max in flight per registrable domain and per host).

    python bench/crawl.py [--feeds 1200]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from _loopback import patch_resolver  # bench/ is on sys.path: these run as scripts


def _peak_rss_mb() -> float:
    """Peak RSS of this process plus its largest child (our parse and writer processes)."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return (own + children) / 1024.0


def _urls(port: int, n: int) -> list[str]:
    """``n`` blogs, each on a registrable domain of its own.

    The testbed also hosts blogs under one shared suffix (``*.blogs.test``); politeness crawls
    those two at a time, so they would measure the per-key cap rather than the crawler.
    """
    req = urllib.request.Request(
        f"http://127.0.0.1:{port}/_testbed/catalog.json?n={2 * n}&behaviours=blog",
        headers={"Host": "control.test"},
    )
    with urllib.request.urlopen(req) as resp:  # loopback only
        data = json.load(resp)
    items = data["feeds"] if isinstance(data, dict) else data
    return [i["url"] for i in items if not i["host"].endswith(".blogs.test")][:n]


def _testbed_stats(port: int, reset: bool = False) -> dict:  # type: ignore[type-arg]
    path = "/_testbed/reset" if reset else "/_testbed/stats"
    req = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}",
        headers={"Host": "control.test"},
        method="POST" if reset else "GET",
    )
    with urllib.request.urlopen(req) as resp:
        return json.load(resp) if not reset else {}


# --- contenders (each runs in its own process) -------------------------------------------------


def run_ours(port: int, urls: list[str]) -> dict[str, float]:
    import asyncio

    from fairfetch.crawl import Crawler, utcnow
    from fairfetch.net.politeness import politeness_key
    from fairfetch.store import open_store
    from fairfetch.testing import Testbed

    tmp = tempfile.mkdtemp()
    settings = Testbed(1, port=port).settings(db=f"sqlite:///{tmp}/bench.db")
    store = open_store(settings.db)
    now = utcnow()
    for u in urls:
        store.add_feed(u, now=now, politeness_key=politeness_key(u))

    from fairfetch.gctune import tune_for_crawling
    from fairfetch.net.fetch import Fetcher

    tune_for_crawling()  # as `fairfetch crawl` and `fairfetch run` do before their work

    async def once(fetcher: Fetcher) -> float:
        async with Crawler(store, settings, fetcher=fetcher) as crawler:
            t0 = time.perf_counter()
            summary = await crawler.crawl_due()
            elapsed = time.perf_counter() - t0
        assert summary.counts["ok"] + summary.counts["not_modified"] == len(urls), summary.as_dict()
        return elapsed

    async def passes() -> tuple[float, ...]:
        # One fetcher for the first two passes, as in `fairfetch run`: robots.txt stays cached,
        # so the second pass measures the 304 path itself. The third pass has a fetcher of its
        # own, as a cron-style `crawl --once` process does: robots.txt comes from the store.
        # Each pass's Crawler closes its worker processes, so their CPU counts in that pass.
        async with Fetcher(settings) as fetcher:
            cpu0 = _cpu()
            full = await once(fetcher)
            cpu_full = _cpu() - cpu0
            store.set_due([f.id for f in store.iter_feeds()], utcnow())
            cpu0 = _cpu()
            conditional = await once(fetcher)
            cpu_304 = _cpu() - cpu0
        store.set_due([f.id for f in store.iter_feeds()], utcnow())
        async with Fetcher(settings) as fresh:
            cpu0 = _cpu()
            cold = await once(fresh)
            cpu_cold = _cpu() - cpu0
        return full, cpu_full, conditional, cpu_304, cold, cpu_cold

    full, cpu_full, conditional, cpu_304, cold, cpu_cold = asyncio.run(passes())
    return {
        "full_s": full,
        "conditional_s": conditional,
        "cpu_full_s": cpu_full,
        "cpu_304_s": cpu_304,
        "cold_304_s": cold,
        "cpu_cold_304_s": cpu_cold,
        "peak_rss_mb": _peak_rss_mb(),
        "entries": store.count_entries(),
    }


def _cpu() -> float:
    """CPU seconds of this process and its finished children (our worker processes)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def run_reader(port: int, urls: list[str]) -> dict[str, float]:
    patch_resolver()
    from reader import make_reader

    tmp = tempfile.mkdtemp()
    r = make_reader(f"{tmp}/reader.sqlite")
    for u in urls:
        r.add_feed(u)
    t0 = time.perf_counter()
    r.update_feeds(workers=16)
    elapsed = time.perf_counter() - t0
    entries = r.get_entry_counts().total
    return {"full_s": elapsed, "peak_rss_mb": _peak_rss_mb(), "entries": entries}


def run_plain(port: int, urls: list[str]) -> dict[str, float]:
    patch_resolver()
    import feedparser
    import requests

    session = requests.Session()
    t0 = time.perf_counter()
    entries = 0
    for u in urls:
        resp = session.get(u, timeout=30)
        entries += len(feedparser.parse(resp.content).entries)
    elapsed = time.perf_counter() - t0
    return {"full_s": elapsed, "peak_rss_mb": _peak_rss_mb(), "entries": entries}


CONTENDERS = {"fairfetch": run_ours, "reader": run_reader, "requests+feedparser": run_plain}


def _scenario(feeds: int, latency: float) -> tuple[dict[str, dict[str, float]], dict[str, int]]:
    """Start a testbed with ``latency``, run every contender against it, one after another."""
    with socket.socket() as probe:  # a free loopback port for the testbed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    testbed = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "fairfetch",
            "testbed",
            "--port",
            str(port),
            "--latency",
            str(latency),
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    results: dict[str, dict[str, float]] = {}
    violations: dict[str, int] = {}
    try:
        deadline = time.monotonic() + 60
        while True:  # wait until the testbed answers on its control host
            try:
                _testbed_stats(port)
                break
            except OSError:
                if time.monotonic() > deadline or testbed.poll() is not None:
                    raise
                time.sleep(0.2)
        for name in CONTENDERS:
            _testbed_stats(port, reset=True)
            out = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--contender",
                    name,
                    "--port",
                    str(port),
                    "--feeds",
                    str(feeds),
                ],
                env=env,
                capture_output=True,
                check=True,
                text=True,
            )
            results[name] = json.loads(out.stdout.strip().splitlines()[-1])
            domains = _testbed_stats(port).get("domains", {})
            violations[name] = sum(1 for d in domains.values() if d["max_in_flight"] > 2)
    finally:
        testbed.terminate()
        testbed.wait()
    return results, violations


def _report(
    n: int, latency: float, results: dict[str, dict[str, float]], violations: dict[str, int]
) -> None:
    ours = results["fairfetch"]
    print(
        f"\nfeed crawl, {n} testbed blogs on {n} registrable domains, robots.txt honoured, "
        f"{latency * 1000:.0f} ms per answer (first crawl: full fetch + parse + store)"
    )
    print(
        f"{'contender':22} {'feeds/s':>9} {'seconds':>8} {'peak RSS MB':>12} {'entries':>8} "
        f"{'politeness violations':>22}"
    )
    for name, r in results.items():
        print(
            f"{name:22} {n / r['full_s']:9.1f} {r['full_s']:8.2f} {r['peak_rss_mb']:12.1f} "
            f"{int(r['entries']):8d} {violations[name]:22d}"
        )
    for name in ("reader", "requests+feedparser"):
        print(f"ratio fairfetch / {name}: {results[name]['full_s'] / ours['full_s']:.1f}x")
    print(
        f"fairfetch 304 path: {n / ours['conditional_s']:.1f} feeds/s; against a full crawl it "
        f"costs {ours['cpu_304_s'] / ours['cpu_full_s']:.2f} of the CPU and "
        f"{ours['conditional_s'] / ours['full_s']:.2f} of the time"
    )
    print(
        f"fairfetch 304 path from a new process (crawl --once, robots.txt from the store): "
        f"{n / ours['cold_304_s']:.1f} feeds/s, {ours['cpu_cold_304_s'] / ours['cpu_full_s']:.2f} "
        f"of a full crawl's CPU"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--feeds", type=int, default=1200)
    parser.add_argument(
        "--latency",
        type=float,
        action="append",
        help="seconds per answer; repeatable (default: 0 and 0.05 — the crawler's own cost, "
        "then a web with round trips, where concurrency matters)",
    )
    parser.add_argument("--contender")
    parser.add_argument("--port", type=int)
    args = parser.parse_args()
    if args.contender:
        urls = _urls(args.port, args.feeds)
        print(json.dumps(CONTENDERS[args.contender](args.port, urls)))
        return
    everything = {}
    for latency in args.latency or [0.0, 0.05]:
        results, violations = _scenario(args.feeds, latency)
        _report(args.feeds, latency, results, violations)
        everything[str(latency)] = {"results": results, "violations": violations}
    Path("bench/out").mkdir(parents=True, exist_ok=True)
    Path("bench/out/crawl.json").write_text(json.dumps(everything, indent=2))


if __name__ == "__main__":
    main()
