"""The feed crawler: claim due feeds, fetch them politely, parse, decide, store.

Shape (like Scrapy's engine, but small): due feeds stream out of the store a page at a time into
the politeness :class:`~fairfetch.net.politeness.Dispatcher`, whose handler fetches, parses and
asks :func:`fairfetch.crawl.health.decide` what changes; results go through a bounded queue to one
writer task that applies them in batched transactions off the event loop. Every feed that was due
ends in exactly one bucket of the :class:`CrawlSummary` — crawled, throttled, failed, or skipped
with a reason — and the summary checks that in code.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import logging
import multiprocessing
import time
from collections import Counter
from collections.abc import Callable, Coroutine, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from fairfetch.config import Settings
from fairfetch.crawl.fetch_reading import (
    feed_state,
    hint_seconds,
    metadata_changes,
    permanent_target,
)
from fairfetch.crawl.health import (
    ROBOTS_ABSENT_MARK,
    Decision,
    HealthPolicy,
    Outcome,
    decide,
    robots_assumed_unavailable,
)
from fairfetch.crawl.outage import OutageDetector
from fairfetch.crawl.redecide import Redecision, feed_changes
from fairfetch.crawl.results import AccountingError, AddReport, CrawlSummary, FeedResult, utcnow
from fairfetch.crawl.robots_store import StoreRobotsBacking
from fairfetch.crawl.uncancelled import run_to_the_end
from fairfetch.crawl.urls import normalize_feed_url
from fairfetch.crawl.workers import shareable as _shareable
from fairfetch.crawl.workers import warm_up as _warm_up
from fairfetch.crawl.workers import write_in_child as _write_in_child
from fairfetch.errors import FairfetchError, InvalidURLError
from fairfetch.feeds.discover import declared_feed_links, guessed_feed_urls, looks_like_html
from fairfetch.feeds.model import Feed
from fairfetch.feeds.parse import parse_feed
from fairfetch.net.fetch import Fetcher
from fairfetch.net.outcome import NETWORK_ERROR_KINDS, FetchResult
from fairfetch.net.platform_trust import PlatformTrust
from fairfetch.net.politeness import (
    BackendGrouper,
    Dispatcher,
    Feedback,
    host_of,
    politeness_key,
)
from fairfetch.store import CrawlWrite, FeedRecord, SqlStore
from fairfetch.store.crawl_claims import KeyClaims
from fairfetch.store.politeness_repo import current_key_pauses, save_key_pauses

log = logging.getLogger("fairfetch.crawl")

__all__ = ["AddReport", "CrawlSummary", "Crawler", "FeedResult", "add_feeds", "utcnow"]


@dataclass
class _Job:
    feed: FeedRecord
    trigger: str
    future: asyncio.Future[FeedResult]
    keep_ids: bool = False
    #: Fetched as if its robots.txt were absent (unreachable past the grace, RFC 9309 §2.3.1.4).
    robots_absent: bool = False
    #: The politeness key it was queued on (a backend's, when grouped): the key that holds it.
    key: str = ""
    #: How many results of its feed this process had decided when ``feed`` was read: another
    #: decided since (a WebSub ping's re-fetch beside a pass) makes that row stale.
    seen: int = 0


#: Due feeds whose stored robots.txt copies are read in one query before they are submitted.
_PREFETCH = 500

#: Feeds on a key that cannot start for this long are deferred rather than waited for.
DEFER_AFTER = 10.0

#: Why a due feed was left to another pass on the same store (see store/crawl_claims.py).
SKIP_KEY_HELD = "another crawler holds its politeness key"
SKIP_CRAWLED_MEANWHILE = "crawled meanwhile by another crawler"
SKIP_KEY_PAUSED = "deferred (key paused)"


def pause_after(summary: CrawlSummary, idle: float) -> float:
    """Seconds ``run`` waits before its next pass: a minute after an outage of ours, ``idle``
    when the pass had nothing of its own to crawl, none when it crawled (more may be due).

    Feeds left to another pass on the store (its keys held, or crawled by it meanwhile) were
    due but not this pass's: starting again at once would spin against the store for as long
    as that pass runs."""
    if summary.outage:
        return 60.0
    others = summary.skipped[SKIP_KEY_HELD] + summary.skipped[SKIP_CRAWLED_MEANWHILE]
    return idle if summary.due - others <= 0 else 0.0


class Crawler:
    """Crawls feeds from a store; one instance per process (it owns the politeness slots)."""

    def __init__(
        self,
        store: SqlStore,
        settings: Settings,
        *,
        fetcher: Fetcher | None = None,
        clock: Callable[[], datetime] = utcnow,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store = store
        self.settings = settings
        self.policy = HealthPolicy.from_settings(settings)
        self.clock = clock
        #: The outage detector's clock (seconds; injectable so tests can pass its window).
        self._mono = monotonic
        self._fetcher = fetcher
        self._own_fetcher = fetcher is None
        #: robots.txt answers outlive the process in the store (cron-style `crawl --once`).
        self.robots_backing = StoreRobotsBacking(store, clock=clock)
        if fetcher is not None and fetcher.robots.backing is None:
            fetcher.robots.back_with(self.robots_backing)
        self._dispatcher: Dispatcher[_Job] | None = None
        self._dispatch_task: asyncio.Task[None] | None = None
        self._write_queue: asyncio.Queue[tuple[CrawlWrite, _Job | None, frozenset[str]]] | None = (
            None
        )
        self._writer_task: asyncio.Task[None] | None = None
        self._held: list[tuple[CrawlWrite, _Job]] = []  # network failures awaiting a verdict
        self.outages = OutageDetector(threshold_keys=settings.outage_keys)
        #: Hosts of different domains throttled together from one address share a backend key
        #: (in memory: evidence, not a fingerprint, so it is not written to the feed).
        self.grouper = BackendGrouper()
        #: A domain whose hosts answered as one platform (``backend:<name>``, fingerprinted on
        #: two hosts at least): its other feeds — added since, not fetched yet — are that
        #: platform's too, and share its key instead of a second budget of the domain's own.
        self._platform_of_domain: dict[str, str] = {}
        #: Which members of a platform's key may pause it (a claim alone may not).
        self.trust = PlatformTrust()
        self._platform_hosts: dict[tuple[str, str], set[str]] = {}
        #: Poll jobs queued in the dispatcher and not started yet, by feed id (for deferral).
        self._waiting: dict[int, _Job] = {}
        #: Refresh and ping jobs queued and not started yet (a feed may be in two at once: the
        #: web's button twice), by the job's identity: deferred, like polls, when their key
        #: pauses while they wait, but with their schedule left as it was.
        self._waiting_asked: dict[int, _Job] = {}
        self._on_result: Callable[[FeedResult], None] | None = None
        self._pool: ProcessPoolExecutor | None = None
        self._write_pool: ProcessPoolExecutor | None = None
        self._pool_wanted = False
        self._outage_recorded = False
        #: Completions waiting for a fetch of their own after their handler's slot was freed.
        self._after_slot_tasks: set[asyncio.Task[None]] = set()
        #: The politeness keys the running pass holds against other passes on the store.
        self._claims: KeyClaims | None = None
        #: The latest Retry-After end this process stored per key (one write per new pause,
        #: not per throttled request of a storm).
        self._pauses_saved: dict[str, datetime] = {}
        #: The keys told to wait (by any process) when the running pass began.
        self._stored_pauses: dict[str, datetime] = {}
        #: Per feed: results decided by this process, results queued and not yet written, and
        #: a lock that makes its results decided one at a time (see _decide_on_fresh_row).
        self._decided: Counter[int] = Counter()
        self._unwritten: Counter[int] = Counter()
        #: Per feed, its jobs not finished yet; and the claims reading rows again right now.
        #: A feed with neither, and nothing unwritten, needs no count (kept small: the counts
        #: are dropped then, not kept for every feed a long `run` ever crawled).
        self._live: Counter[int] = Counter()
        self._reading_claims = 0
        self._deciding: dict[int, asyncio.Lock] = {}
        self._written: asyncio.Condition | None = None

    # --- lifecycle -------------------------------------------------------------------------

    @property
    def fetcher(self) -> Fetcher:
        if self._fetcher is None:
            self._fetcher = Fetcher(self.settings)
            self._fetcher.robots.back_with(self.robots_backing)
        return self._fetcher

    def _ensure_started(self) -> Dispatcher[_Job]:
        if self._dispatcher is None:
            self._dispatcher = Dispatcher(self.settings)
            self._write_queue = asyncio.Queue(maxsize=self.settings.batch_size * 4)
            self._writer_task = asyncio.create_task(self._writer(), name="fairfetch-writer")
            self._dispatch_task = asyncio.create_task(
                self._dispatcher.run(self._handle), name="fairfetch-dispatch"
            )
        return self._dispatcher

    def snapshot(self) -> dict[str, Any]:
        """Per politeness key: queued, in flight, rate, pause (for /metrics and /crawlstats)."""
        return self._dispatcher.snapshot() if self._dispatcher is not None else {}

    async def aclose(self, *, abort: bool = False) -> None:
        """Finish what was started and close. With ``abort`` (leaving on an error, or on Ctrl-C:
        the crawl was cancelled), fetches in flight and queued are dropped rather than waited
        for — up to ``total_timeout`` each, or a key's Retry-After — and their feeds stay due,
        as after a kill; results already fetched are still written."""
        if self._dispatcher is not None:
            if self._after_slot_tasks:
                if abort:
                    for task in self._after_slot_tasks:
                        task.cancel()
                await asyncio.gather(*self._after_slot_tasks, return_exceptions=True)
            self._dispatcher.close()
            if self._dispatch_task is not None:
                if abort or (
                    self._dispatcher.state.in_flight == 0 and self._dispatcher.state.pending
                ):
                    # Aborting, or only deferred jobs are left (waiting for a paused key):
                    # drop what is in flight or queued.
                    self._dispatch_task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await self._dispatch_task
            await self._flush_held(as_outage=self.outages.in_outage)
            assert self._write_queue is not None
            await self._write_queue.join()
            if self._writer_task is not None:
                self._writer_task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await self._writer_task
            # Every queued result was written (joined above): none is left to wait for if
            # this crawler is started again.
            self._unwritten.clear()
            self._dispatcher = None
        await self.robots_backing.flush()
        if self._own_fetcher and self._fetcher is not None:
            await self._fetcher.aclose()
            self._fetcher = None
        for pool in (self._pool, self._write_pool):
            if pool is not None:
                pool.shutdown(wait=True, cancel_futures=True)
        self._pool = self._write_pool = None

    async def __aenter__(self) -> Crawler:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, *exc: object) -> None:
        await self.aclose(abort=exc_type is not None)

    # --- public operations -----------------------------------------------------------------

    async def crawl_due(
        self,
        *,
        max_feeds: int | None = None,
        on_total: Callable[[int], None] | None = None,
        on_result: Callable[[FeedResult], None] | None = None,
    ) -> CrawlSummary:
        """Crawl every feed due now (at most ``max_feeds``), then return the accounting."""
        started = time.monotonic()
        now = self.clock()
        dead_probe = self.settings.dead_probe_interval
        due = await asyncio.to_thread(self.store.count_due, now, dead_probe_interval=dead_probe)
        if max_feeds is not None:
            due = min(due, max_feeds)
        if on_total:
            on_total(due)
        self._start_pool(due)
        summary = CrawlSummary()
        futures: list[asyncio.Future[FeedResult]] = []
        page: list[FeedRecord] = []
        # One set of claims a pass, closed with it: its connection (PostgreSQL) is the pool's,
        # so a database restarted between passes costs one failed pass, not every later one.
        claims = self._claims = await run_to_the_end(lambda: KeyClaims(self.store))
        # Read once a pass: a key this pass claims is crawled by no other pass meanwhile, so
        # no other crawl stores a new pause on it until the pass ends.
        self._stored_pauses = await asyncio.to_thread(current_key_pauses, self.store, now)
        try:
            for feed in self._stream_due(now, due):
                page.append(feed)
                if len(page) >= _PREFETCH:
                    await self._submit_page(page, futures, now)
            await self._submit_page(page, futures, now)
            # What was streamed is what was due: a feed deleted since the count (from the web,
            # in `run`) is simply not there, and must not make the accounting fail.
            summary.due = len(futures)
            await self._finish(futures, summary, on_result)
        finally:
            # Every result of the pass is written (or failed): the keys go to whoever is next.
            self._claims = None
            # To its end even when the pass is cancelled (see crawl/uncancelled.py).
            await run_to_the_end(claims.close)
        summary.elapsed = time.monotonic() - started
        self._check_accounting(summary)
        return summary

    async def _claim_page(
        self, page: list[FeedRecord], now: datetime
    ) -> list[tuple[FeedRecord, str | None]]:
        """Claim the politeness keys of a page of due feeds, then read the feeds again.

        Each feed comes back as it is now, with None to crawl it or the reason it is skipped:
        another pass (a cron `crawl --once` beside `run`) holds its key, or crawled it after
        this page was read, or its key was told to wait (a Retry-After any process stored)
        for DEFER_AFTER or more — such a feed is deferred to the end of the pause without a
        request; a shorter pause is waited out on the key, as one this process was given.
        Feeds removed meanwhile are left out. See store/crawl_claims.py.
        """
        claims = self._claims
        assert claims is not None

        def claim_and_reread() -> tuple[
            set[str], dict[int, FeedRecord], set[int], dict[str, float]
        ]:
            held = claims.claim(f.politeness_key for f in page)
            mine = [f for f in page if f.politeness_key in held]
            due, alive = self.store.recheck_due(
                mine, now, dead_probe_interval=self.settings.dead_probe_interval
            )
            at = self.clock()
            paused = {
                key: (until - at).total_seconds()
                for key, until in self._stored_pauses.items()
                if key in held and until > at
            }
            by_when: dict[datetime, list[int]] = {}
            for f in due.values():
                left = paused.get(f.politeness_key, 0.0)
                if left >= DEFER_AFTER:
                    by_when.setdefault(at + timedelta(seconds=left), []).append(f.id)
            for when, ids in by_when.items():
                self.store.set_due(ids, when)
            return held, due, alive, paused

        # Not left running when the pass is cancelled: the pass's ``finally`` hands back what
        # it holds, and a claim finishing after that would stay held (crawl/uncancelled.py).
        held, due, alive, paused = await run_to_the_end(claim_and_reread)
        out: list[tuple[FeedRecord, str | None]] = []
        for feed in page:
            if feed.politeness_key not in held:
                out.append((feed, SKIP_KEY_HELD))
            elif feed.id in due:
                left = paused.get(feed.politeness_key, 0.0)
                if 0.0 < left < DEFER_AFTER:
                    self._ensure_started().pause_for(self._key_for(feed), left)
                out.append((due[feed.id], SKIP_KEY_PAUSED if left >= DEFER_AFTER else None))
            elif feed.id in alive:
                out.append((feed, SKIP_CRAWLED_MEANWHILE))
        return out

    async def _submit_page(
        self, page: list[FeedRecord], futures: list[asyncio.Future[FeedResult]], now: datetime
    ) -> None:
        """Submit a page of due feeds, their stored robots.txt read first in one query."""
        if not page:
            return
        for feed in page:
            # Before the page is claimed and queued: a platform's feeds added since it was
            # fingerprinted go on its key (and a stored pause of their domain binds it there),
            # not on their domain's.
            if feed.politeness_key.startswith("backend:"):
                self._learn_platform(feed.url, feed.politeness_key)
        # Before the claim reads the rows again; a result decided but not written yet (queued,
        # or a network failure held for the outage verdict) is not in the rows it reads, so it
        # does not count as seen: the poll then waits for it and reads the row afresh.
        decided_before = {f.id: self._decided[f.id] - self._unwritten[f.id] for f in page}
        self._reading_claims += 1
        try:
            claimed = await self._claim_page(page, now)
        finally:
            self._reading_claims -= 1
        page.clear()
        loop = asyncio.get_running_loop()
        for feed, skip in claimed:
            if skip is None:
                page.append(feed)
                continue
            done: asyncio.Future[FeedResult] = loop.create_future()
            done.set_result(FeedResult(feed.id, feed.url, f"skipped:{skip}"))
            futures.append(done)
        if not page:
            return
        robots = self.fetcher.robots
        if self.settings.obey_robots and robots.backing is self.robots_backing:
            origins = {robots.origin(f.url) for f in page}
            await self.robots_backing.prefetch(o for o in origins if not robots.holds(o))
        for feed in page:
            futures.append(
                await self._submit(feed, "poll", keep_ids=False, seen=decided_before[feed.id])
            )
        page.clear()

    def _stream_due(self, now: datetime, limit: int) -> Iterable[FeedRecord]:
        return self.store.iter_due(
            now, dead_probe_interval=self.settings.dead_probe_interval, limit=limit
        )

    async def refresh(self, keys: Sequence[str | int], *, trigger: str = "refresh") -> CrawlSummary:
        """Crawl these feeds now, whatever their schedule (dead ones included: that revives)."""
        started = time.monotonic()
        summary = CrawlSummary()
        futures: list[asyncio.Future[FeedResult]] = []
        found: list[FeedRecord] = []
        for key in keys:
            feed = await asyncio.to_thread(self.store.find_feed, key)
            summary.due += 1
            if feed is None:
                summary.skipped["not found"] += 1
                continue
            found.append(feed)
        paused = self._paused_for(found)
        loop = asyncio.get_running_loop()
        for feed in found:
            if feed.id in paused:
                # The publisher asked for a rest: not even queued (it would wait out the pause,
                # up to a day, and the web request with it). Its schedule is left as it was.
                done: asyncio.Future[FeedResult] = loop.create_future()
                done.set_result(FeedResult(feed.id, feed.url, f"skipped:{SKIP_KEY_PAUSED}"))
                futures.append(done)
                continue
            futures.append(await self._submit(feed, trigger, keep_ids=True))
        await self._finish(futures, summary, None)
        summary.elapsed = time.monotonic() - started
        self._check_accounting(summary)
        return summary

    def _paused_for(self, feeds: Sequence[FeedRecord]) -> set[int]:
        """Of these feeds (about to be refreshed), those whose key may not start in this
        process for DEFER_AFTER or more (a Retry-After, AIMD), as a pass defers its own."""
        if not feeds:
            return set()
        state = self._ensure_started().state
        mono = time.monotonic()
        return {
            f.id for f in feeds if state.startable_at(self._key_for(f)) - mono >= DEFER_AFTER
        }

    async def run_forever(self, stop: asyncio.Event, *, idle: float = 5.0) -> None:
        """Crawl what is due, wait a little, repeat; pause after an outage."""
        try:
            while not stop.is_set():
                summary = await self.crawl_due()
                wait = pause_after(summary, idle)
                if wait:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(stop.wait(), timeout=wait)
        finally:
            await self.aclose()

    async def add(self, urls: Iterable[str]) -> AddReport:
        """Add feeds (or sites, whose feeds are discovered); one GET each, shared with the first
        crawl. Bad URLs are reported one by one; the good ones are still added."""
        report = AddReport()
        candidates: dict[str, str] = {}
        for raw in urls:
            try:
                candidates.setdefault(normalize_feed_url(raw), raw)
            except InvalidURLError as exc:
                report.invalid.append((raw, exc.reason))
        jobs: list[_Job] = []
        await asyncio.gather(
            *(self._add_one(raw, url, report, jobs) for url, raw in candidates.items())
        )
        await self._added(jobs)
        return report

    # --- internals -------------------------------------------------------------------------

    async def _add_one(self, raw: str, url: str, report: AddReport, jobs: list[_Job]) -> None:
        now = self.clock()
        existing = await asyncio.to_thread(self.store.find_feed, url)
        if existing is not None:
            report.existing.append(existing.url)
            return
        result = await self._fetch_for_add(url)
        moved_to = permanent_target(result)
        if moved_to is not None and moved_to != url:
            # The feed's old address: every hop permanent, onto a feed we already have.
            there = await asyncio.to_thread(self.store.find_feed, moved_to)
            if there is not None and there.url == moved_to:
                report.existing.append(there.url)
                return
        body = result.body if result.ok else b""
        if result.ok and looks_like_html(body) and not parse_feed(body, url=result.final_url).ok:
            await self._add_discovered(raw, url, result, report, jobs)
            return
        feed, created = await asyncio.to_thread(
            self.store.add_feed,
            url,
            now=now,
            politeness_key=politeness_key(url),
            # The URL as given, normalised: lookups are by that spelling (once the feed moves,
            # a raw "HTTP://HOST/feed" would match no later lookup and a re-add duplicated it).
            original_url=None,
        )
        if not created:
            report.existing.append(feed.url)
            return
        report.added.append(feed.url)
        self._ensure_started()
        loop = asyncio.get_running_loop()
        job = _Job(feed, "add", loop.create_future(), keep_ids=False)
        await self._complete(job, result)
        jobs.append(job)

    async def _add_discovered(
        self, raw: str, url: str, page: FetchResult, report: AddReport, jobs: list[_Job]
    ) -> None:
        """A site URL: add the feeds its page declares; if it declares none, try the well-known
        paths one by one and add the first that answers with a feed (its GET is its first
        crawl). Guesses are never added unchecked."""
        now = self.clock()
        declared = declared_feed_links(page.body, page.final_url)
        report.discovered[url] = declared
        for link in declared:
            try:
                link = normalize_feed_url(link)
            except InvalidURLError:
                continue
            feed, created = await asyncio.to_thread(
                self.store.add_feed, link, now=now, politeness_key=politeness_key(link)
            )
            (report.added if created else report.existing).append(feed.url)
        if declared:
            return
        for guess in guessed_feed_urls(page.final_url):
            result = await self._fetch_for_add(guess)
            if not (result.ok and parse_feed(result.body, url=result.final_url).ok):
                continue
            report.discovered[url] = [guess]
            feed, created = await asyncio.to_thread(
                self.store.add_feed, guess, now=now, politeness_key=politeness_key(guess)
            )
            if not created:
                report.existing.append(feed.url)
                return
            report.added.append(feed.url)
            job = _Job(feed, "add", asyncio.get_running_loop().create_future(), keep_ids=False)
            await self._complete(job, result)
            jobs.append(job)
            return
        report.failed.append((raw, "no feed found on that page or at the usual paths"))

    async def _added(self, jobs: list[_Job]) -> None:
        """Wait for the added feeds' first crawls to be written. A network failure is held for
        an outage verdict that a pass gives once only held failures are left (see _finish); an
        add has no pass, so the batch's held failures are decided once every fetch of the batch
        is in (it waited for ever before; then each add decided alone, before the detector had
        seen the others: 30 adds during our outage left 19 feeds in error)."""
        if any(held is job for _, held in self._held for job in jobs):
            await self._flush_held(as_outage=self.outages.in_outage)
        for job in jobs:
            await job.future

    async def _fetch_for_add(self, url: str) -> FetchResult:
        dispatcher = self._ensure_started()
        loop = asyncio.get_running_loop()
        box: asyncio.Future[FetchResult] = loop.create_future()

        async def one() -> Feedback:
            try:
                result = await self.fetcher.fetch(url, check_robots=self.settings.obey_robots)
            except Exception as exc:  # a bug in the fetch path: loud, and `add` must not hang
                log.exception("fetch of %s raised", url)
                result = FetchResult(
                    url=url, final_url=url, error_kind="internal", error_detail=repr(exc)[:500]
                )
            if result.throttled and result.retry_after:
                # About the key, not this request: the next process to crawl sits it out too.
                await self._save_pause(politeness_key(url), result.retry_after)
            if not box.done():  # the add was cancelled (Ctrl-C): nobody waits for it
                box.set_result(result)
            return self._feedback(result)

        await dispatcher.put(url, _AddFetch(one), key=politeness_key(url))  # type: ignore[arg-type]
        return await box

    async def _submit(
        self, feed: FeedRecord, trigger: str, *, keep_ids: bool, seen: int | None = None
    ) -> asyncio.Future[FeedResult]:
        dispatcher = self._ensure_started()
        job = _Job(feed, trigger, asyncio.get_running_loop().create_future(), keep_ids)
        job.seen = self._decided[feed.id] if seen is None else seen
        self._live[feed.id] += 1
        job.future.add_done_callback(functools.partial(self._job_done, feed.id))
        job.key = self._key_for(feed)
        if trigger == "poll":
            self._waiting[feed.id] = job
        else:
            self._waiting_asked[id(job)] = job
        await dispatcher.put(feed.url, job, key=job.key)
        return job.future

    def _key_for(self, feed: FeedRecord) -> str:
        """A fingerprinted backend wins (the feed's own, or its domain's platform); else
        evidence of a shared backend; else the feed's key."""
        key = feed.politeness_key
        if key.startswith("backend:"):
            return key
        platform = self._platform_of_domain.get(key)
        if platform is not None:
            return platform
        return self.grouper.backend_for(feed.url, now=time.monotonic()) or key

    def _learn_platform(self, url: str, backend_key: str) -> None:
        """``url`` answered as ``backend_key``. Two hosts of one domain doing so make the
        domain the platform's (one custom domain on a platform says nothing of the domain's
        other hosts: a company's blog on Ghost, its podcast elsewhere)."""
        domain = politeness_key(url)
        if domain in self._platform_of_domain or domain.startswith("backend:"):
            return
        hosts = self._platform_hosts.setdefault((domain, backend_key), set())
        hosts.add(host_of(url))
        if len(hosts) >= 2:
            self._platform_of_domain[domain] = backend_key
            del self._platform_hosts[(domain, backend_key)]

    async def _finish(
        self,
        futures: list[asyncio.Future[FeedResult]],
        summary: CrawlSummary,
        on_result: Callable[[FeedResult], None] | None,
    ) -> None:
        pending = set(futures)
        while pending:
            done, pending = await asyncio.wait(
                pending, timeout=1.0, return_when=asyncio.FIRST_COMPLETED
            )
            if not done:
                await self._defer_paused_keys()
            for fut in done:
                self._tally(summary, fut.result(), on_result)
            if not done and self._held and len(pending) <= len(self._held):
                # Everything still open is a held network failure: decide now.
                await self._flush_held(as_outage=self.outages.in_outage)
        if self._held:
            await self._flush_held(as_outage=self.outages.in_outage)
        summary.outage = summary.counts["outage"] > 0 or summary.skipped["outage"] > 0

    async def _defer_paused_keys(self) -> None:
        """Feeds queued on a key that may not start for a while (Retry-After, AIMD) are not
        waited for: they are rescheduled to when the key reopens and accounted as deferred.

        A throttle pauses the whole key, often for a minute or more; a one-shot crawl that sat
        out every pause would take minutes for a handful of feeds, and the next crawl would pick
        them up at once and knock on the closed door again. Only ``next_crawl_at`` changes.
        """
        if self._dispatcher is None or not (self._waiting or self._waiting_asked):
            return
        state = self._dispatcher.state
        mono = time.monotonic()
        reopen: dict[str, float] = {}

        def paused(job: _Job) -> bool:
            # The key the job waits on, which is not the feed's own when a backend groups it.
            key = job.key or job.feed.politeness_key
            if key not in reopen:
                reopen[key] = state.startable_at(key) - mono
            return reopen[key] >= DEFER_AFTER

        # A refresh (the CLI's, the web's button) or a ping's re-fetch met by a pause that began
        # after it was queued sat the pause out: `feeds refresh` of four feeds on a platform
        # that throttled took three minutes (Retry-After 60 s each), and up to a day's
        # Retry-After would hold the web request, or every ping queued behind it. It ends now
        # as deferred, as one asked for on a key already paused does; its schedule stays,
        # except that a ping's feed is due when the key reopens (never later than it was), as
        # the WebSub service makes it for a ping that comes while the key is paused. Once
        # queued, only a pause counts, not the key's spacing (a Crawl-delay of 15 s, AIMD's
        # rate): an explicit request waits that out, as it always did. (At submission,
        # refresh() defers on either when it is 10 s or more away: _paused_for.)
        # Taken out of the dict before the first await: two _finish loops (a pass and a ping,
        # in `run`) may run this at once, and each must defer a job once.
        asked: list[tuple[_Job, float]] = []
        for ref, job in list(self._waiting_asked.items()):
            left = state.paused_until(job.key or job.feed.politeness_key) - mono
            if left >= DEFER_AFTER:
                del self._waiting_asked[ref]
                asked.append((job, left))
        now = self.clock()
        for job, left in asked:
            feed = job.feed
            reopens = now + timedelta(seconds=left)
            if job.trigger == "ping" and feed.status != "dead" and (
                feed.next_crawl_at is None or feed.next_crawl_at > reopens
            ):
                await asyncio.to_thread(self.store.set_due, [feed.id], reopens)
            if not job.future.done():
                job.future.set_result(FeedResult(feed.id, feed.url, f"skipped:{SKIP_KEY_PAUSED}"))
        deferred = [job for job in list(self._waiting.values()) if paused(job)]
        if not deferred:
            return
        by_when: dict[datetime, list[int]] = {}
        for job in deferred:
            del self._waiting[job.feed.id]
            when = now + timedelta(seconds=reopen[job.key or job.feed.politeness_key])
            by_when.setdefault(when, []).append(job.feed.id)
        for when, ids in by_when.items():
            await asyncio.to_thread(self.store.set_due, ids, when)
        for job in deferred:
            if not job.future.done():
                job.future.set_result(
                    FeedResult(job.feed.id, job.feed.url, f"skipped:{SKIP_KEY_PAUSED}")
                )

    def _tally(
        self,
        summary: CrawlSummary,
        r: FeedResult,
        on_result: Callable[[FeedResult], None] | None,
    ) -> None:
        if r.outcome.startswith("skipped:"):
            summary.skipped[r.outcome.split(":", 1)[1]] += 1
        else:
            summary.counts[r.outcome] += 1
        if r.outcome == "error":
            summary.errors[r.error_kind or "unknown"] += 1
        summary.new_entries += r.new_entries
        if r.entry_ids or summary.due <= 1000:
            summary.results.append(r)
        if on_result:
            on_result(r)

    def _check_accounting(self, summary: CrawlSummary) -> None:
        if summary.accounted != summary.due:
            raise AccountingError(
                f"{summary.due} feeds were due but {summary.accounted} were accounted for: "
                f"{summary.as_dict()}"
            )

    def _feedback(self, result: FetchResult) -> Feedback:
        # from_result also marks a bare 503 (no Retry-After) as overload: the key's rate
        # halves, as DESIGN.md's politeness says of 429/503, without pausing the key.
        return Feedback.from_result(result)

    async def _handle(self, item: Any) -> Feedback:
        if isinstance(item, _AddFetch):
            return await item.run()
        job: _Job = item
        if self._waiting.get(job.feed.id) is job:
            del self._waiting[job.feed.id]
        self._waiting_asked.pop(id(job), None)
        if job.future.done():  # deferred while it waited: nothing to do
            return Feedback()
        if job.trigger == "poll" and not self.outages.may_probe(
            job.feed.politeness_key, self._mono()
        ):
            # Our network is down: don't spend the feed's request, leave it due (a few
            # feeds go out as probes, so that the end of the outage is noticed).
            job.future.set_result(FeedResult(job.feed.id, job.feed.url, "skipped:outage"))
            return Feedback()
        feed = job.feed
        try:
            result = await self.fetcher.fetch(
                feed.url,
                etag=feed.etag,
                last_modified=feed.last_modified,
                check_robots=self.settings.obey_robots,
            )
            last_good = (
                self.fetcher.robots.last_good_allows(feed.url)
                if result.error_kind == "robots_unreachable"
                else None
            )
            if last_good is False:
                # The publisher's last known rules forbid the feed: RFC 9309 §2.3.1.4 lets us
                # keep using that copy while robots.txt is down, and we do, however old.
                result = dataclasses.replace(
                    result,
                    error_kind="robots",
                    error_detail=(
                        f"disallowed by the last good robots.txt copy ({result.error_detail})"
                    ),
                )
            elif last_good is True:
                # ...and when they allow it, the copy keeps deciding too (past the 30 days it
                # stands in by itself): a month deferred, then read as if robots.txt were
                # absent, would leave a feed its publisher allows unread for nothing.
                result = await self.fetcher.fetch(
                    feed.url,
                    etag=feed.etag,
                    last_modified=feed.last_modified,
                    check_robots=False,
                )
            elif result.error_kind == "robots_unreachable" and robots_assumed_unavailable(
                feed_state(feed), self.clock(), self.policy
            ):
                # robots.txt has been unreachable for longer than the grace: RFC 9309
                # §2.3.1.4 lets us treat it as unavailable (no rules), as for a 4xx.
                job.robots_absent = True
                result = await self.fetcher.fetch(
                    feed.url,
                    etag=feed.etag,
                    last_modified=feed.last_modified,
                    check_robots=False,
                )
        except Exception as exc:
            # A bug in our fetch path: loud in the log and in crawls (kind "internal"), but not
            # the publisher's fault, so it touches no health column; the feed comes back later.
            log.exception("fetch of %s raised", feed.url)
            await self._internal_error(job, exc)
            return Feedback()
        host = host_of(result.final_url or feed.url)
        self.trust.observe(host, result.address)
        delay = self.fetcher.robots.known_crawl_delay(feed.url)
        if delay and self._dispatcher is not None:
            # This host's own delay: a sibling host's shorter one never shortens the key's gap.
            # A gap is the key's: a member of a platform's key by its own say (a Crawl-delay of
            # a day) does not space the platform's other feeds, as its Retry-After does not
            # pause them (net/platform_trust.py).
            key, own = self._key_for(feed), host_of(feed.url)
            if self.trust.binds_key(key, own, result.address if host == own else None):
                self._dispatcher.set_gap(key, delay, host=feed.url)
        feedback = self._feedback(result)
        if result.throttled and result.retry_after:
            if self.trust.binds_key(feed.politeness_key, host, result.address):
                await self._save_pause(feed.politeness_key, result.retry_after)
            platform = self._platform_of_domain.get(feed.politeness_key)
            if platform is not None and self.trust.binds_key(platform, host, result.address):
                # The platform's own feeds, keyed by it, are bound too (any process).
                await self._save_pause(platform, result.retry_after)
            if not self.trust.binds_key(job.key, host, result.address):
                # A member of a platform's key by its own say: its feed waits, the
                # platform's other feeds do not (net/platform_trust.py).
                feedback = dataclasses.replace(feedback, retry_after=None)
        await self._complete(job, result, in_slot=True)
        return feedback

    async def _save_pause(self, key: str, seconds: float) -> None:
        """Keep a key's Retry-After in the store, where the next process to crawl (a cron pass,
        `run` restarted) finds it: the instruction is about the key, not about this process."""
        until = self.clock() + timedelta(seconds=seconds)
        saved = self._pauses_saved.get(key)
        if saved is not None and saved >= until - timedelta(seconds=1):
            return  # another request of the same storm: already stored
        self._pauses_saved[key] = until
        try:
            await asyncio.to_thread(save_key_pauses, self.store, {key: until}, self.clock())
        except FairfetchError:
            # The pause still binds this process; the feed's own reschedule is written with
            # its result. Logged, not fatal: a store hiccup must not lose the crawl's results.
            self._pauses_saved.pop(key, None)
            log.warning("could not store the pause of %s until %s", key, until, exc_info=True)

    async def _complete(
        self,
        job: _Job,
        result: FetchResult,
        *,
        in_slot: bool = False,
        parsed: Feed | None = None,
    ) -> None:
        """Turn one fetch into a CrawlWrite and queue it (or hold it, for network failures).

        ``in_slot``: called from the dispatcher's handler, which holds the feed's politeness
        slot until this returns."""
        lock = self._deciding.setdefault(job.feed.id, asyncio.Lock())
        try:
            async with lock:
                await self._complete_locked(job, result, in_slot=in_slot, parsed=parsed)
        finally:
            if not lock.locked() and self._deciding.get(job.feed.id) is lock:
                del self._deciding[job.feed.id]

    async def _decide_on_fresh_row(self, job: _Job) -> None:
        """Read the feed again where its row may be stale, after this process's results for it
        are written.

        A refresh (`feeds refresh`, a WebSub ping) takes no key claim: a pass of another
        process may have written this feed while the request was out. Decided on the row read
        before it, a failure undid that pass's success (nine failures and a success, then this
        one: dead). A pass's own feeds are claimed and read again instead, but a refresh in
        this process (a ping's re-fetch beside the pass, under `run`) may decide a result for
        the feed after that read. And a result of ours still in the writer's queue is not in
        the row yet: two failures decided each on the row before the other's count, the feed
        counted one (two error rows, error_count 1). So: wait for our queued results of the
        feed, then read it."""
        if job.trigger in ("poll", "add") and self._decided[job.feed.id] == job.seen:
            return
        if self._written is None:
            self._written = asyncio.Condition()
        async with self._written:
            await self._written.wait_for(lambda: self._unwritten[job.feed.id] == 0)
        fresh = await asyncio.to_thread(self.store.find_feed, job.feed.id)
        if fresh is not None:
            job.feed = fresh
            job.seen = self._decided[job.feed.id]

    async def _queue_write(
        self, write: CrawlWrite, job: _Job | None, ids: frozenset[str]
    ) -> None:
        """Queue a result for the writer, counted as decided and unwritten for its feed."""
        assert self._write_queue is not None
        self._decided[write.feed_id] += 1
        self._unwritten[write.feed_id] += 1
        await self._write_queue.put((write, job, ids))

    async def _complete_locked(
        self,
        job: _Job,
        result: FetchResult,
        *,
        in_slot: bool,
        parsed: Feed | None,
    ) -> None:
        # What the request named as our copy (an add names none): the row as it was sent.
        conditional = bool(job.feed.etag or job.feed.last_modified) and job.trigger != "add"
        await self._decide_on_fresh_row(job)
        feed = job.feed
        now = self.clock()
        outcome: Outcome
        extra: dict[str, Any] = {}
        entry_ids: frozenset[str] = frozenset()
        if result.throttled:
            outcome = Outcome(
                "throttled",
                http_status=result.status,
                retry_after=result.retry_after,
                robots_absent=job.robots_absent,
            )
            if result.address:
                # Evidence of a shared backend: hosts of different domains on one address,
                # throttled together, get one key for the feeds submitted from now on.
                self.grouper.observe_throttle(
                    host_of(result.final_url), result.address, time.monotonic()
                )
        elif result.not_modified and not conditional:
            # "What you have is current", to a request that named nothing we have: nothing
            # was read, and calling it a success would hide that (ok, never read, no entry).
            outcome = Outcome(
                "error",
                error_kind="http",
                error_detail="HTTP 304 to a request without validators (no ETag, no "
                "Last-Modified): no copy of ours to reuse",
                http_status=304,
                robots_absent=job.robots_absent,
            )
        elif result.not_modified:
            outcome = Outcome(
                "not_modified",
                http_status=304,
                permanent_target=permanent_target(result),
                hint_seconds=hint_seconds(Feed(), result.headers),
                robots_absent=job.robots_absent,
            )
        elif result.ok:
            if parsed is None:
                parsed = await self._parse(result)
            if not parsed.ok:
                kind = "not_a_feed" if looks_like_html(result.body) else "parse"
                detail = "; ".join(parsed.problems[:3]) or kind
                outcome = Outcome(
                    "error",
                    error_kind=kind,
                    error_detail=detail,
                    http_status=result.status,
                    robots_absent=job.robots_absent,
                )
                parsed = None
            else:
                new_url = None
                if parsed.new_feed_url and parsed.new_feed_url != feed.url:
                    if in_slot:
                        # The confirming fetch needs the new host's slot, which this handler
                        # may hold itself (a move within one host): finish after it frees.
                        self._after_slot(job, self._complete(job, result, parsed=parsed))
                        return
                    new_url = await self._confirm_new_feed_url(parsed.new_feed_url)
                outcome = Outcome(
                    "ok",
                    http_status=result.status,
                    permanent_target=permanent_target(result),
                    new_feed_url=new_url,
                    hint_seconds=hint_seconds(parsed, result.headers),
                    entry_times=tuple(
                        t for e in parsed.entries if (t := e.published or e.updated) is not None
                    ),
                    robots_absent=job.robots_absent,
                )
                entry_ids = frozenset(e.id for e in parsed.entries)
                extra = metadata_changes(feed, parsed, result)
        else:
            outcome = Outcome(
                "error",
                error_kind=result.error_kind or "http",
                error_detail=result.error_detail,
                http_status=result.status,
                robots_absent=job.robots_absent,
            )
        decision: Decision = decide(feed_state(feed), outcome, now, self.policy)
        duplicate_of: int | None = None
        moving_to = decision.changes.get("url")
        if moving_to is not None and moving_to != feed.url:
            other = await asyncio.to_thread(self.store.find_feed, moving_to)
            if other is not None and other.id != feed.id and other.url == moving_to:
                # The move is confirmed, onto a URL the directory already crawls as another
                # feed (the store would refuse it): say so, and stop fetching it twice.
                outcome = Outcome(
                    "error",
                    error_kind="duplicate",
                    error_detail=(
                        f"moved permanently to {moving_to}, which feed #{other.id} already "
                        "crawls; no longer crawled on its own"
                    ),
                    http_status=result.status,
                    robots_absent=job.robots_absent,
                )
                decision = decide(feed_state(feed), outcome, now, self.policy)
                parsed, extra, entry_ids = None, {}, frozenset()
                # The structured link: the store moves this feed's readers to that feed in
                # the transaction that records it (a window between the two lost mails).
                duplicate_of = other.id
        changes = feed_changes(feed, decision, extra, duplicate_of)
        if decision.outcome in ("ok", "not_modified") and extra.get("backend"):
            self._learn_platform(feed.url, str(extra["backend"]))
        if result.status is not None and result.error_kind not in NETWORK_ERROR_KINDS:
            # Any HTTP answer shows the network reaching that key (a 404 as well as a 200).
            self.outages.observe_success(feed.politeness_key, self._mono())
            if not self.outages.in_outage:
                self._outage_recorded = False
        error_detail = outcome.error_detail if decision.outcome == "error" else None
        if job.robots_absent and decision.outcome != "throttled":
            note = ROBOTS_ABSENT_MARK
            error_detail = f"{error_detail}; {note}" if error_detail else note
        write = CrawlWrite(
            feed_id=feed.id,
            url=feed.url,
            at=now,
            outcome=decision.outcome,
            politeness_key=feed.politeness_key,
            feed_changes=changes,
            http_status=result.status,
            error_kind=outcome.error_kind if decision.outcome == "error" else None,
            error_detail=error_detail,
            bytes=result.bytes_read,
            duration=result.duration,
            trigger=job.trigger,
            entries=parsed.entries if parsed is not None else None,
            hops=result.hops if decision.outcome != "throttled" else None,
            authors=[(p, "author") for p in parsed.authors] if parsed is not None else None,
            contacts=parsed.contacts if parsed is not None else None,
            first_crawl=feed.last_success_at is None and feed.entry_count == 0,
            # Another process may write this feed before we do: the store then decides its
            # columns again on the row it holds (crawl/redecide.py).
            read_crawl_count=feed.crawl_count,
            redecide=Redecision(outcome, now, self.policy, extra, duplicate_of),
        )
        if decision.outcome == "error" and outcome.error_kind in NETWORK_ERROR_KINDS:
            in_outage = self.outages.observe_network_failure(feed.politeness_key, self._mono())
            # Decided, and unwritten until flushed: another result of this feed (a ping's
            # re-fetch) read before the flush would not count this failure (two connect error
            # rows, error_count 1).
            self._decided[write.feed_id] += 1
            self._unwritten[write.feed_id] += 1
            self._held.append((write, job))
            if in_outage:
                await self._flush_held(as_outage=True)
            return
        if self._held and self.outages.network_fine(self._mono()):
            # Answers from several keys: the network works, so the held failures are the
            # feeds' own. (One answer is no such evidence: see crawl/outage.py.)
            await self._flush_held(as_outage=False)
        await self._queue_write(write, job, entry_ids if job.keep_ids else frozenset())

    async def _parse(self, result: FetchResult) -> Feed:
        """Parse in the worker processes when a large crawl started them, else here."""
        headers = dict(result.headers)
        self._ensure_pools()
        if self._pool is not None:
            loop = asyncio.get_running_loop()
            try:
                return await loop.run_in_executor(
                    self._pool, parse_feed, result.body, result.final_url, headers
                )
            except BrokenProcessPool:
                log.error("parse process died; parsing in the event loop from now on")
                self._pool = None
        return parse_feed(result.body, url=result.final_url, headers=headers)

    def _start_pool(self, due: int) -> None:
        """A large pass may use worker processes; they start at its first full response.

        Parsing and writing are CPU-heavy Python; in this process they would take the GIL from
        the event loop (measured: the loop's socket calls waited on the writer thread). The
        writer process is still the one writer, so batches stay serialised. A pass of 304s
        needs neither, so nothing starts until there is something to parse.
        """
        if self.settings.parse_processes > 0 and due >= self.settings.parse_pool_threshold:
            self._pool_wanted = True

    def _ensure_pools(self) -> None:
        if not self._pool_wanted or self._pool is not None:
            return
        n = self.settings.parse_processes
        ctx = multiprocessing.get_context("spawn")  # not fork: we have threads and sockets
        self._pool = ProcessPoolExecutor(max_workers=n, mp_context=ctx)
        for _ in range(n):
            self._pool.submit(_warm_up, None)
        if self._write_pool is None and _shareable(self.store.url):
            self._write_pool = ProcessPoolExecutor(max_workers=1, mp_context=ctx)
            self._write_pool.submit(_warm_up, self.store.url)

    async def _internal_error(self, job: _Job, exc: BaseException) -> None:
        now = self.clock()
        write = CrawlWrite(
            feed_id=job.feed.id,
            url=job.feed.url,
            at=now,
            outcome="error",
            politeness_key=job.feed.politeness_key,
            feed_changes={"next_crawl_at": now + timedelta(seconds=self.policy.default_interval)},
            error_kind="internal",
            error_detail=repr(exc)[:500],
            trigger=job.trigger,
        )
        await self._queue_write(write, job, frozenset())

    async def _confirm_new_feed_url(self, raw: str) -> str | None:
        """``itunes:new-feed-url`` moves the feed only once the new URL answers with a feed
        (through the perimeter like any fetch: never to an address it refuses)."""
        try:
            url = normalize_feed_url(raw)
        except InvalidURLError:
            return None
        # Through the dispatcher, under the new URL's politeness key and host slot: a platform
        # many feeds move onto must not get one unscheduled request per moving feed. A key that
        # is paused for a while (Retry-After) is not waited for: confirm on a later crawl.
        if self._dispatcher is not None:
            wait = self._dispatcher.state.startable_at(politeness_key(url)) - time.monotonic()
            if wait >= DEFER_AFTER:
                return None
        result = await self._fetch_for_add(url)
        if result.ok and parse_feed(result.body, url=result.final_url).ok:
            # The URL the publisher named, or where it moved permanently: never where a
            # temporary redirect points today (a signed CDN address, a stand-in).
            return permanent_target(result) or url
        return None

    def _after_slot(self, job: _Job, work: Coroutine[Any, Any, None]) -> None:
        """Run ``work`` (the rest of ``job``) once the handler has returned its slot."""
        task = asyncio.create_task(work)
        self._after_slot_tasks.add(task)

        def done(t: asyncio.Task[None]) -> None:
            self._after_slot_tasks.discard(t)
            if t.cancelled():
                if not job.future.done():
                    job.future.cancel()
                return
            exc = t.exception()
            if exc is not None:
                log.error("completing %s failed", job.feed.url, exc_info=exc)
                if not job.future.done():
                    job.future.set_exception(exc)

        task.add_done_callback(done)

    async def _flush_held(self, *, as_outage: bool) -> None:
        held, self._held = self._held, []
        if not held:
            return
        if as_outage and not self._outage_recorded:
            self._outage_recorded = True  # one row per outage, however many failures it holds
            started = held[0][0].at
            await asyncio.to_thread(
                self.store.record_outage,
                started,
                self.outages.distinct_keys(self._mono()),
                f"{len(held)} network failures across unrelated keys; not counted against feeds",
            )
        for write, job in held:
            if as_outage:
                # Nothing about the feed changes: it stays due and is retried after the pause.
                write = CrawlWrite(
                    feed_id=write.feed_id,
                    url=write.url,
                    at=write.at,
                    outcome="outage",
                    politeness_key=write.politeness_key,
                    feed_changes={},
                    http_status=write.http_status,
                    error_kind=write.error_kind,
                    error_detail=write.error_detail,
                    duration=write.duration,
                    trigger=write.trigger,
                )
            # Counted as decided and unwritten when it was held.
            assert self._write_queue is not None
            await self._write_queue.put((write, job, frozenset()))

    async def _writer(self) -> None:
        """The one writer: batches results into transactions, off the event loop."""
        assert self._write_queue is not None
        queue = self._write_queue
        while True:
            first = await queue.get()
            batch = [first]
            while len(batch) < self.settings.batch_size and not queue.empty():
                batch.append(queue.get_nowait())
            writes = [w for w, _, _ in batch]
            try:
                if self._write_pool is not None:
                    loop = asyncio.get_running_loop()
                    written = await loop.run_in_executor(
                        self._write_pool, _write_in_child, self.store.url, writes, self.settings
                    )
                else:
                    written = await asyncio.to_thread(self.store.write, writes, self.settings)
            except Exception as exc:
                if isinstance(exc, FairfetchError):
                    # The database refused (StoreError): its message is the whole story, on
                    # one line; the traceback, with the statement and the batch's rows (every
                    # stored field of every entry), is for a debug log only.
                    log.error("writing %d crawl results failed: %s", len(batch), exc)
                    log.debug("the refused write", exc_info=exc)
                else:  # a bug of ours: loud, with its traceback
                    log.exception("writing %d crawl results failed", len(batch))
                # Before task_done: aclose() cancels this task once the queue is joined.
                await self._mark_written(writes)
                for _w, job, _ids in batch:
                    if job is not None and not job.future.done():
                        job.future.set_exception(exc)
                        # Reported above and raised to the pass (at its first such result):
                        # not once more per feed when the futures nobody awaited are collected.
                        job.future.exception()
                    queue.task_done()
                continue
            if self.robots_backing.pending:
                # Before task_done: aclose() cancels this task once the queue is joined.
                await self.robots_backing.flush()
            await self._mark_written(writes)  # before task_done, for the same reason
            for (w, job, ids), res in zip(batch, written, strict=True):
                if job is not None and not job.future.done():
                    job.future.set_result(
                        FeedResult(
                            feed_id=w.feed_id,
                            url=res.moved_to or w.url,
                            outcome=w.outcome,
                            new_entries=res.new_entries,
                            entry_ids=ids,
                            error_kind=w.error_kind,
                            http_status=w.http_status,
                        )
                    )
                queue.task_done()

    def _job_done(self, feed_id: int, _future: object) -> None:
        self._live[feed_id] -= 1
        if self._live[feed_id] <= 0:
            del self._live[feed_id]
            self._forget(feed_id)

    def _forget(self, feed_id: int) -> None:
        """Drop a feed's count of decided results once nothing could compare with it."""
        if not (self._reading_claims or self._live[feed_id] or self._unwritten[feed_id]):
            self._decided.pop(feed_id, None)

    async def _mark_written(self, writes: Sequence[CrawlWrite]) -> None:
        """These results are written (or refused): completions of their feeds may read them."""
        for w in writes:
            self._unwritten[w.feed_id] -= 1
            if self._unwritten[w.feed_id] <= 0:
                del self._unwritten[w.feed_id]
                self._forget(w.feed_id)
        if self._written is not None:
            async with self._written:
                self._written.notify_all()


@dataclass
class _AddFetch:
    """A one-off fetch (feeds add) that goes through the same politeness slots."""

    run: Callable[[], Any]


async def add_feeds(
    store: SqlStore, settings: Settings, urls: Iterable[str], *, fetcher: Fetcher | None = None
) -> AddReport:
    async with Crawler(store, settings, fetcher=fetcher) as crawler:
        return await crawler.add(urls)
