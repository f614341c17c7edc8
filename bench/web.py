"""Directory latency at scale: /feeds, a search, a feed page and /crawlstats.

Builds a SQLite directory of 100,000 feeds and 1,000,000 entries (plus a day of crawls) through
the store's own write path (SqlStore.add_feed and SqlStore.write, the crawler's), then times
requests against the real app served by uvicorn on loopback, and prints median and p99 next to the
same figures on an empty database. Goal: p99 <= 100 ms.

    .venv/bin/python bench/web.py [--feeds 100000] [--entries 10] [--requests 200]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx

from fairfetch.config import Settings
from fairfetch.feeds.model import Contact, Entry, Person
from fairfetch.store import CrawlWrite, SqlStore, open_store
from fairfetch.web.serve import serve

WORDS = [
    "alpha",
    "bravo",
    "charlie",
    "delta",
    "echo",
    "foxtrot",
    "golf",
    "hotel",
    "india",
    "juliet",
    "kilo",
    "lima",
    "mike",
    "november",
    "oscar",
    "papa",
    "quebec",
    "romeo",
    "sierra",
    "tango",
    "uniform",
    "victor",
    "whiskey",
    "xray",
    "yankee",
    "zulu",
    "garden",
    "science",
    "history",
    "music",
    "cooking",
    "travel",
    "finance",
    "health",
    "politics",
    "design",
    "coding",
    "rust",
    "python",
    "weekly",
    "daily",
    "notes",
    "journal",
    "radio",
    "show",
    "talk",
    "review",
    "letters",
    "dispatch",
    "digest",
    "field",
    "lab",
]
KINDS = ("blog", "blog", "blog", "podcast", "newsletter", "video")
OUTCOMES = ("ok", "ok", "ok", "ok", "not_modified", "not_modified", "throttled", "error")
ERRORS = ("dns", "timeout", "http", "connect", "gone")


def _title(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 4))).title()


def seed(store: SqlStore, n_feeds: int, per_feed: int, extra_crawls: int, now: datetime) -> None:
    rng = random.Random(7)
    ids: list[tuple[int, str, str]] = []
    t0 = time.perf_counter()
    for i in range(n_feeds):
        host = f"{rng.choice(WORDS)}{i}.example.test"
        url = f"http://{host}/feed.xml"
        feed, _ = store.add_feed(url, now=now - timedelta(days=3), politeness_key=host)
        ids.append((feed.id, url, host))
    print(f"  {n_feeds} feeds added in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    t0 = time.perf_counter()
    batch: list[CrawlWrite] = []
    for n, (fid, url, host) in enumerate(ids):
        at = now - timedelta(seconds=rng.uniform(0, 86_000))
        kind = rng.choice(KINDS)
        status = "dead" if n % 97 == 0 else ("error" if n % 23 == 0 else "ok")
        entries = [
            Entry(
                id=f"{url}#{k}",
                title=_title(rng),
                link=f"http://{host}/p/{k}",
                published=now - timedelta(hours=k * 7 + rng.uniform(0, 5)),
                summary=f"<p>{_title(rng)} — entry {k}</p>",
            )
            for k in range(per_feed)
        ]
        batch.append(
            CrawlWrite(
                feed_id=fid,
                url=url,
                at=at,
                outcome="ok",
                politeness_key=host,
                feed_changes={
                    "title": _title(rng),
                    "description": "A feed about " + " ".join(rng.sample(WORDS, 6)),
                    "kind": kind,
                    "kind_evidence": [f"bench: {kind}"],
                    "status": status,
                    "error_count": 0 if status == "ok" else (10 if status == "dead" else 2),
                    "last_error": None if status == "ok" else "timeout: bench",
                    "last_success_at": at,
                    "last_fetched_at": at,
                    "next_crawl_at": None
                    if status == "dead"
                    else now + timedelta(seconds=rng.uniform(-600, 7200)),
                },
                http_status=200,
                bytes=rng.randint(2_000, 60_000),
                duration=rng.uniform(0.02, 1.5),
                entries=entries,
                authors=[(Person(name=f"{_title(rng)} Writer"), "author")] if n % 3 == 0 else None,
                contacts=[Contact(url=f"mailto:editor@{host}", network="email", source="author")]
                if n % 5 == 0
                else None,
                first_crawl=True,
            )
        )
        if len(batch) >= 500:
            store.write(batch)
            batch = []
    if batch:
        store.write(batch)
    print(
        f"  {n_feeds * per_feed} entries written in {time.perf_counter() - t0:.0f} s",
        file=sys.stderr,
    )
    t0 = time.perf_counter()
    batch = []
    for _ in range(extra_crawls):
        fid, url, host = rng.choice(ids)
        outcome = rng.choice(OUTCOMES)
        at = now - timedelta(seconds=rng.uniform(0, 86_000))
        kind = rng.choice(ERRORS) if outcome == "error" else None
        batch.append(
            CrawlWrite(
                feed_id=fid,
                url=url,
                at=at,
                outcome=outcome,
                politeness_key="letterbox.test"
                if outcome == "throttled" and rng.random() < 0.6
                else host,
                feed_changes={},
                http_status=200 if outcome == "ok" else None,
                error_kind=kind,
                bytes=rng.randint(0, 40_000) if outcome == "ok" else 0,
                duration=rng.uniform(0.01, 2.0),
            )
        )
        if len(batch) >= 2000:
            store.write(batch)
            batch = []
    if batch:
        store.write(batch)
    print(
        f"  {extra_crawls} more crawls written in {time.perf_counter() - t0:.0f} s", file=sys.stderr
    )


async def measure(
    db: str, paths: dict[str, list[str]], requests: int
) -> dict[str, tuple[float, float, float]]:
    """Per page: (median, p99) of ``requests`` requests after a warm-up, and the first request
    after the server started (cold caches: statement cache, /crawlstats' settled minutes), which
    the median and p99 leave out."""
    settings = Settings(db=db)
    store = open_store(db)
    stop = asyncio.Event()
    started: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    task = asyncio.create_task(
        serve(settings, store, None, stop, host="127.0.0.1", port=0, on_started=started.set_result)
    )
    base = await started
    out: dict[str, tuple[float, float, float]] = {}
    try:
        async with httpx.AsyncClient(base_url=base, timeout=30) as client:
            for name, variants in paths.items():
                first = 0.0
                for k, p in enumerate(variants[:3]):  # warm-up: first-use caches
                    t0 = time.perf_counter()
                    (await client.get(p)).raise_for_status()
                    if k == 0:
                        first = (time.perf_counter() - t0) * 1000
                times = []
                for i in range(requests):
                    p = variants[i % len(variants)]
                    t0 = time.perf_counter()
                    r = await client.get(p)
                    times.append((time.perf_counter() - t0) * 1000)
                    r.raise_for_status()
                times.sort()
                p99 = times[min(len(times) - 1, round(0.99 * (len(times) - 1)))]
                out[name] = (statistics.median(times), p99, first)
    finally:
        stop.set()
        await task
        store.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--feeds", type=int, default=100_000)
    ap.add_argument("--entries", type=int, default=10, help="entries per feed")
    ap.add_argument("--crawls", type=int, default=200_000, help="extra crawl rows in the last day")
    ap.add_argument("--requests", type=int, default=200, help="requests per page")
    ap.add_argument(
        "--dir", default=None, help="where to build the databases (default: a temp dir)"
    )
    ap.add_argument(
        "--reuse",
        default=None,
        metavar="DIR",
        help="measure databases kept by an earlier --keep run in DIR instead of building",
    )
    ap.add_argument("--keep", action="store_true", help="keep the databases (in --dir) afterwards")
    ap.add_argument("--build-only", action="store_true", help="build, measure nothing")
    args = ap.parse_args()
    now = datetime.now(UTC)
    if args.reuse:
        tmp_ctx: Any = contextlib.nullcontext(args.reuse)
    elif args.keep or args.build_only:
        tmp_ctx = contextlib.nullcontext(tempfile.mkdtemp(dir=args.dir))
    else:
        tmp_ctx = tempfile.TemporaryDirectory(dir=args.dir)
    with tmp_ctx as tmp:
        empty = f"sqlite:///{Path(tmp) / 'empty.db'}"
        full = f"sqlite:///{Path(tmp) / 'full.db'}"
        if not args.reuse:
            open_store(empty).close()
            print(f"building {args.feeds} feeds x {args.entries} entries ...", file=sys.stderr)
            store = open_store(full)
            seed(store, args.feeds, args.entries, args.crawls, now)
            store.close()
        one = open_store(empty)  # the empty directory's one feed, for its feed page
        one.add_feed("http://one.example.test/feed", now=now, politeness_key="one.example.test")
        one.close()
        if args.build_only or args.keep:
            print(f"databases kept in {tmp}", file=sys.stderr)
        if args.build_only:
            return
        mid = max(1, args.feeds // 2)
        feed_pages = [f"/feeds/{1 + (i * 7919) % args.feeds}" for i in range(50)]
        pages = {
            "/feeds": ["/feeds", "/feeds?page=2", "/feeds?sort=newest", f"/feeds?page={mid // 50}"],
            "search": [
                "/search?q=garden",
                "/search?q=radio+show",
                "/search?q=python",
                "/search?q=weekly",
            ],
            "feed page": feed_pages,
            "/crawlstats": ["/crawlstats"],
        }
        empty_pages = dict(pages, **{"feed page": ["/feeds/1"]})
        res_empty = asyncio.run(measure(empty, empty_pages, args.requests))
        res_full = asyncio.run(measure(full, pages, args.requests))
    label = f"{args.feeds:,} feeds / {args.feeds * args.entries:,} entries"
    print(
        f"\n{'page':<14}{'empty median':>14}{'empty p99':>12}{'full median':>14}"
        f"{'full p99':>12}{'full first':>12}   ({label}; ms)"
    )
    worst = 0.0
    for name in pages:
        em, ep, _ = res_empty[name]
        fm, fp, ff = res_full[name]
        worst = max(worst, fp)
        print(f"{name:<14}{em:>14.1f}{ep:>12.1f}{fm:>14.1f}{fp:>12.1f}{ff:>12.1f}")
    print(
        f"(median and p99 of {args.requests} requests per page after 3 warm-up requests; "
        "'full first': each page's first request (for the first page, the first after "
        "start), not in the p99; client and server share one event loop, so the client's own "
        "time is in every figure)"
    )
    print(
        f"\nworst p99 on the full database: {worst:.1f} ms (goal <= 100 ms): "
        + ("met" if worst <= 100 else "NOT met")
    )


if __name__ == "__main__":
    main()
