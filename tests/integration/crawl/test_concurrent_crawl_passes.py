"""Two crawl passes on one store at once: a cron `crawl --once` that overruns into the next one,
or a cron `crawl --once` beside `run`.

Each pass holds the politeness slots of its own process only, so two passes over the same due
feeds fetched every feed twice, two requests in flight on one host where the limit is one, and
wrote two crawls rows for each. Worse, a pass decides a feed's health from the row it read when
the feed was due: a feed another process had meanwhile read successfully could be marked dead
on that stale row by a failure of its own. A pass now claims the politeness keys it crawls
(for as long as its process lives: a killed pass delays nothing) and re-reads the feeds once it
holds them; feeds on a key another pass holds, or crawled by another pass meanwhile, are
skipped with that reason and left to it.

Deterministic, no sleeps: the testbed holds the first pass's requests at a gate while the
second pass runs; the gate opens when the second pass ends or when a request of its own
arrives (without the claims it would wait on the gate for ever).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
from aiohttp import web

from fairfetch.crawl import Crawler, utcnow
from fairfetch.net.politeness import politeness_key
from fairfetch.store import CrawlWrite, FeedRecord, SqlStore, open_store
from fairfetch.testing import loopback_server, testbed_thread

from .conftest import loopback_settings


def _crawl_once(db: str, env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "fairfetch", "--db", db, "crawl", "--once", "--json"],
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def _summary(proc: subprocess.Popen[bytes]) -> dict[str, Any]:
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err.decode()
    return dict(json.loads(out))


def test_concurrent_crawl_once_passes_fetch_each_feed_once(db_url: str) -> None:
    with testbed_thread(seed=3) as tb:
        specs = tb.catalog(n=6, behaviours=["blog"])
        store = open_store(db_url)
        now = utcnow()
        for s in specs:
            store.add_feed(s.url, now=now, politeness_key=politeness_key(s.url))
        store.close()
        gate = tb.hold(lambda _host: True)
        first = _crawl_once(db_url, tb.env())
        try:
            # The first pass is mid-flight: each host's robots.txt asked for and held.
            gate.wait_arrived_blocking(len(specs), timeout=60)
            assert tb._loop is not None
            # A request of the second pass opens the gate (else it would wait for ever).
            second_arrived = asyncio.run_coroutine_threadsafe(
                gate.wait_arrived(len(specs) + 1), tb._loop
            )
            second_arrived.add_done_callback(lambda f: f.cancelled() or gate.open())
            second = _crawl_once(db_url, tb.env())
            b = _summary(second)
        finally:
            second_arrived.cancel()
            gate.open()
        a = _summary(first)
        seen = tb.snapshot()

    feed_hits = Counter(h for h, st in seen["hosts"].items() for _ in range(st["requests"]))
    assert a["ok"] == 6
    # The second pass took nothing the first one holds: no feed fetched twice, one request at a
    # time per host (the first pass's robots.txt, then its feed).
    assert b["ok"] + b["failed"] + b["throttled"] + b["not_modified"] == 0
    assert b["skipped"] == {"another crawler holds its politeness key": 6}
    assert b["due"] == 6
    assert {s.host for s in specs} == set(feed_hits)
    assert set(feed_hits.values()) == {2}, feed_hits  # robots.txt + the feed, once each
    assert {st["max_in_flight"] for st in seen["hosts"].values()} == {1}
    engine = sa.create_engine(db_url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(
                sa.text("SELECT feed_id, count(*) FROM crawls GROUP BY feed_id")
            ).fetchall()
    finally:
        engine.dispose()
    assert len(rows) == 6
    assert {n for _, n in rows} == {1}


@asynccontextmanager
async def ok_then_failing_server(hits: Counter[str]) -> AsyncIterator[int]:
    """The feed answers the first read with a feed, every later one with a 500."""

    async def handle(request: web.Request) -> web.Response:
        hits[request.path] += 1
        if request.path == "/robots.txt":
            return web.Response(status=404)
        if hits[request.path] == 1:
            body = (
                '<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>'
                "<item><guid>a</guid><title>a</title></item></channel></rss>"
            )
            return web.Response(body=body.encode(), content_type="application/rss+xml")
        return web.Response(status=500)

    async with loopback_server(handle) as port:
        yield port


class _StaleCrawler(Crawler):
    """A pass whose page of due feeds was read before another pass crawled them (the window
    between reading a page and fetching it), made reproducible: it streams the rows it is given."""

    def __init__(self, *args: Any, stale: list[FeedRecord], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._stale = stale

    def _stream_due(self, now: Any, limit: int) -> list[FeedRecord]:
        return list(self._stale)


def _ninth_failure_behind(feed: FeedRecord, now: datetime) -> CrawlWrite:
    """Nine failures in a row, the last an hour ago, due again: the next failure makes it dead."""
    return CrawlWrite(
        feed_id=feed.id, url=feed.url, at=now - timedelta(hours=1), outcome="error",
        politeness_key=feed.politeness_key, error_kind="http", http_status=500,
        feed_changes={"status": "error", "error_count": 9, "last_error": "http: 500",
                      "last_fetched_at": now - timedelta(hours=1),
                      "next_crawl_at": now - timedelta(minutes=1)},
    )  # fmt: skip


async def test_a_pass_on_a_stale_row_does_not_mark_a_feed_read_meanwhile_dead(
    db_url: str,
) -> None:
    hits: Counter[str] = Counter()
    async with ok_then_failing_server(hits) as port:
        url = f"http://flaky.test:{port}/feed"
        setup = open_store(db_url)
        other = SqlStore(db_url, migrate_schema=False)
        try:
            now = utcnow()
            feed, _ = setup.add_feed(url, now=now, politeness_key=politeness_key(url))
            # Nine failures in a row: the next one makes it dead.
            setup.write([_ninth_failure_behind(feed, now)])
            stale = list(setup.iter_due(utcnow(), dead_probe_interval=30 * 86400))
            assert [f.error_count for f in stale] == [9]

            # Another process reads the feed: it answers, the feed is healthy again.
            async with Crawler(other, loopback_settings(db_url)) as a:
                done = await a.crawl_due()
            assert done.counts["ok"] == 1
            assert setup.get_feed(feed.id).status == "ok"

            # The pass that read the row before that now gets to it.
            async with _StaleCrawler(setup, loopback_settings(db_url), stale=stale) as b:
                late = await b.crawl_due()
            after = setup.get_feed(feed.id)
        finally:
            other.close()
            setup.close()
    assert (after.status, after.error_count) == ("ok", 0)
    assert hits["/feed"] == 1  # read once, not again on the stale row
    assert late.skipped == Counter({"crawled meanwhile by another crawler": 1})


def _server_noticed_the_death(store: SqlStore, keys: list[str]) -> None:
    """On PostgreSQL, wait until the server has ended the killed holder's session: it does so
    when it reads the closed socket, a moment after the kill (on a loaded machine the claim
    below ran first, and failed). A blocking advisory lock returns exactly then; lock_timeout
    is a hang guard only. SQLite's record locks go with the process, before wait() returns."""
    if store.dialect != "postgresql":
        return
    import sqlalchemy as sa

    from fairfetch.store.crawl_claims import _ADVISORY_NS, key_slot

    with store.engine.connect() as conn:
        conn.execute(sa.text("SET LOCAL lock_timeout = '60s'"))
        for slot in sorted({key_slot(k) for k in keys}):
            args = {"ns": _ADVISORY_NS, "s": slot}
            conn.execute(sa.text("SELECT pg_advisory_lock(:ns, :s)"), args)
            conn.execute(sa.text("SELECT pg_advisory_unlock(:ns, :s)"), args)
        conn.rollback()


_HOLDER = """
import sys
from fairfetch.store import SqlStore
from fairfetch.store.crawl_claims import KeyClaims

claims = KeyClaims(SqlStore(sys.argv[1], migrate_schema=False))
print(sorted(claims.claim(["platform.test", "blog.test"])), flush=True)
sys.stdin.read()  # held until killed
"""


def test_concurrent_key_claims_are_exclusive_and_die_with_their_process(db_url: str) -> None:
    from fairfetch.store.crawl_claims import KeyClaims

    store = open_store(db_url)
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, db_url],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    mine = KeyClaims(store)
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().decode().strip() == "['blog.test', 'platform.test']"
        # Another process holds two keys: this crawler gets only the third.
        assert mine.claim(["platform.test", "blog.test", "other.test"]) == {"other.test"}
        holder.kill()
        holder.wait()
        _server_noticed_the_death(store, ["platform.test", "blog.test"])
        # Its claims went with it: nothing to wait for, no stale row to expire.
        assert mine.claim(["platform.test", "blog.test"]) == {"platform.test", "blog.test"}
        # Two crawlers of one process (two stores on one database) are told apart too.
        other_store = SqlStore(db_url, migrate_schema=False)
        second = KeyClaims(other_store)
        assert second.claim(["platform.test", "new.test"]) == {"new.test"}
        mine.close()
        assert second.claim(["platform.test"]) == {"platform.test"}
        second.close()
        other_store.close()
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()
        mine.close()
        store.close()


def test_run_waits_after_a_pass_that_another_crawler_left_nothing_to_do() -> None:
    """`run` starts its next pass at once while feeds were due (a full queue), and waits a
    little when none were. Feeds it skipped because a cron `crawl --once` holds their keys
    were due but not its to crawl: starting again at once span the loop, a pass after pass
    of queries against the store, for as long as the other pass ran."""
    from fairfetch.crawl.loop import SKIP_CRAWLED_MEANWHILE, SKIP_KEY_HELD, pause_after
    from fairfetch.crawl.results import CrawlSummary

    left = CrawlSummary(due=5)
    left.skipped.update({SKIP_KEY_HELD: 4, SKIP_CRAWLED_MEANWHILE: 1})
    assert pause_after(left, idle=5.0) == 5.0
    busy = CrawlSummary(due=5)
    busy.skipped[SKIP_KEY_HELD] = 4
    busy.counts["ok"] = 1
    assert pause_after(busy, idle=5.0) == 0.0  # it crawled: more may be due, go on
    assert pause_after(CrawlSummary(due=0), idle=5.0) == 5.0
    assert pause_after(CrawlSummary(due=3, counts=Counter({"ok": 3})), idle=5.0) == 0.0
    down = CrawlSummary(due=3, outage=True)
    down.skipped["outage"] = 3
    assert pause_after(down, idle=5.0) == 60.0


def test_concurrent_key_claims_of_a_large_directory_fit_the_database(db_url: str) -> None:
    """A pass over a large directory holds the keys of every due feed at once (tens of thousands
    of registrable domains). One PostgreSQL advisory lock per key filled the server's shared lock
    table (max_locks_per_transaction x max_connections: 6,400 slots by default) and the pass
    failed, 'out of shared memory'. Keys share a bounded number of claim slots instead."""
    from fairfetch.store.crawl_claims import KeyClaims

    store = open_store(db_url)
    claims = KeyClaims(store)
    other = KeyClaims(store)
    try:
        keys = [f"site{i}.test" for i in range(30_000)]
        assert claims.claim(keys) == set(keys)
        assert other.claim(["site7.test", "never-seen.test"]) <= {"never-seen.test"}
        claims.close()
        assert other.claim(["site7.test"]) == {"site7.test"}
    finally:
        claims.close()
        other.close()
        store.close()


async def test_a_refresh_decides_on_the_feed_as_it_is_when_its_answer_comes(db_url: str) -> None:
    """`feeds refresh` and a WebSub ping's re-fetch take no key claim (another process may be
    crawling the feed's key). While a refresh's request was out, a pass of another process read
    the feed successfully; the refresh's failure was then decided on the row it had read before
    its request, nine failures in a row, and marked the feed dead. It is decided on the row as it
    is when the answer comes: one failure after a success."""
    hits: Counter[str] = Counter()
    first_arrived = asyncio.Event()
    release_first = asyncio.Event()

    async def handle(request: web.Request) -> web.Response:
        hits[request.path] += 1
        if request.path == "/robots.txt":
            return web.Response(status=404)
        if hits[request.path] == 1:  # the refresh's request: held, then a failure
            first_arrived.set()
            await release_first.wait()
            return web.Response(status=500)
        body = (
            '<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>'
            "<item><guid>a</guid><title>a</title></item></channel></rss>"
        )
        return web.Response(body=body.encode(), content_type="application/rss+xml")

    async with loopback_server(handle) as port:
        url = f"http://flaky.test:{port}/feed"
        store = open_store(db_url)
        other = SqlStore(db_url, migrate_schema=False)
        try:
            now = utcnow()
            feed, _ = store.add_feed(url, now=now, politeness_key=politeness_key(url))
            store.write([_ninth_failure_behind(feed, now)])
            async with Crawler(store, loopback_settings(db_url)) as b:
                refresh = asyncio.create_task(b.refresh([feed.id]))
                await first_arrived.wait()
                async with Crawler(other, loopback_settings(db_url)) as a:
                    done = await a.crawl_due()
                assert done.counts["ok"] == 1
                assert store.get_feed(feed.id).status == "ok"
                release_first.set()
                refreshed = await refresh
            after = store.get_feed(feed.id)
        finally:
            release_first.set()
            other.close()
            store.close()
    assert refreshed.counts["error"] == 1
    assert (after.status, after.error_count) == ("error", 1)
