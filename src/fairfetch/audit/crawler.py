"""The site crawl: breadth first over one site, with the fetch engine, into a crawl file.

Why it is shaped this way:

- **Level by level.** A level (all pages at one click depth) is fetched concurrently; the next
  level is built from the crawl file once the level is written, ordered by (parent id, link
  position). That is the order a one-at-a-time breadth-first crawl would have, so depths are
  exact, ``--max-pages`` cuts at the same page every time, and a resumed crawl (``--resume``
  after a SIGKILL) ends with the same file as an uninterrupted one.
- **One writer.** Fetch workers hand finished pages to a bounded queue; one writer applies them
  in ``executemany`` batches of upserts. Ids of assets come from an in-memory URL→id map, never
  from per-row lookups.
- **Probes beside the crawl.** External links, redirect destinations and assets are
  status-checked through :class:`~fairfetch.audit.probe.ProbeQueue` (one request in flight per
  foreign host, round-robin over hosts) while pages are still being fetched. Nothing from a
  foreign site is parsed. Every URL that is not checked is recorded with its reason.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from protego import Protego

from fairfetch.audit.crawlfile import CrawlFile
from fairfetch.audit.pacing import Pacer, throttle_wait
from fairfetch.audit.pagerows import Built, Fetched
from fairfetch.audit.probe import ProbeQueue
from fairfetch.audit.sink import InProcessSink, ProcessSink, Sink
from fairfetch.audit.sitemapxml import SITEMAP_MAX_BYTES
from fairfetch.audit.sitemapxml import parse_sitemap as _parse_sitemap
from fairfetch.audit.sketch import SKETCH_VERSION
from fairfetch.audit.traps import TrapLimits, trap_reason
from fairfetch.audit.urls import Scope, normalize
from fairfetch.config import Settings
from fairfetch.errors import AuditError, InputError, InvalidURLError
from fairfetch.net.fetch import Fetcher
from fairfetch.net.outcome import FetchResult

__all__ = ["MAX_CONCURRENCY", "CrawlOptions", "CrawlStats", "crawl_site"]

_MAX_SITEMAP_FILES = 50
#: Why a URL is status-checked, most telling first: an external row shows one (``via``). A
#: redirect destination first (its row carries the redirect's far end), then what the older
#: alphabetical choice gave; a foreign canonical or alternate only when no page links to it.
_VIA_ORDER = ("redirect", "refresh", "image", "link", "resource", "canonical", "hreflang")


class _Level(NamedTuple):
    """One breadth-first level: its pages still to fetch, all its page ids, its depth."""

    todo: list[tuple[int, str]]
    ids: list[int]
    depth: int | None


class FetcherLike(Protocol):
    """What the crawl needs of :class:`fairfetch.net.fetch.Fetcher` (the real one in use)."""

    async def fetch(
        self,
        url: str,
        *,
        method: str = "GET",
        max_bytes: int | None = None,
        read_body: bool = True,
        follow_redirects: bool = True,
        check_robots: bool = False,
    ) -> FetchResult: ...


@dataclass(frozen=True)
class CrawlOptions:
    max_pages: int | None = None
    max_depth: int | None = None
    registrable_domain: bool = False
    resume: bool = False
    #: Requests in flight to the audited site. Default: settings.per_host_in_flight. An owner
    #: auditing their own site may raise it.
    concurrency: int | None = None
    #: Probes in flight in total (still one per foreign host).
    probe_concurrency: int = 16
    max_externals: int = 10_000
    use_sitemaps: bool = True
    batch_size: int = 256
    #: Parse pages and write the crawl file in a second process (uses a second core). None:
    #: when this process may run on two cores or more (measured: +15-25 % pages/s at 10,000
    #: pages on two cores; on one core the pipe is pure overhead).
    parse_process: bool | None = None
    #: Crawler traps (audit/traps.py): an internal URL found by a link or a redirect is not
    #: followed when it is longer than this many characters, repeats a path segment (or run
    #: of segments) this many times in a row, or has more query parameters than this. Each
    #: skipped URL is counted once in ``links_skipped`` ("trap: <reason>"). None: no limit.
    trap_max_url_length: int | None = 2000
    trap_max_segment_repeats: int | None = 3
    trap_max_parameters: int | None = 10

    def trap_limits(self) -> TrapLimits:
        return TrapLimits(
            self.trap_max_url_length, self.trap_max_segment_repeats, self.trap_max_parameters
        )


@dataclass
class CrawlStats:
    pages_done: int = 0
    pages_queued: int = 0
    externals_registered: int = 0
    externals_checked: int = 0
    externals_pending: int = 0
    not_checked: dict[str, int] = field(default_factory=dict)
    links_skipped: dict[str, int] = field(default_factory=dict)
    rows: int = 0  # pages + links + page_images + page_resources written
    cut_short: str = ""
    #: While the site has every worker waiting (a throttle's Retry-After): what, how long,
    #: until when, and what follows; "" otherwise. For the progress line: a wait of minutes
    #: with nothing moving looks like a hang.
    waiting: str = ""
    #: Throttles that paused the crawl (each page at most four: three retries, then recorded).
    throttle_waits: int = 0


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class _Crawl:
    def __init__(
        self,
        start_url: str,
        cf: CrawlFile,
        settings: Settings,
        options: CrawlOptions,
        fetcher: FetcherLike,
        progress: Callable[[CrawlStats], None] | None,
    ) -> None:
        self.start_url = start_url
        self.cf = cf
        self.settings = settings
        self.options = options
        self.fetcher = fetcher
        self.progress = progress
        self.scope = Scope(start_url, registrable_domain=options.registrable_domain)
        # One worker a slot: a per_host_in_flight of millions from a config file started
        # millions of workers (the crawl never began).
        self.concurrency = min(
            MAX_CONCURRENCY, max(1, options.concurrency or settings.per_host_in_flight)
        )
        self.site_slots = asyncio.Semaphore(self.concurrency)
        self.pacer = Pacer(settings.per_key_gap)
        self.sink: Sink
        if _use_parse_process(options.parse_process):
            self.sink = ProcessSink(
                str(cf.path), start_url, options.registrable_domain, options.batch_size
            )
        else:
            self.sink = InProcessSink(cf, self.scope, options.batch_size)
        self.stats = CrawlStats()
        self.page_ids: dict[str, int] = {}
        self.next_id = 1
        self.pages_started = 0
        self.probe_kinds: dict[str, set[str]] = {}
        self.probes = ProbeQueue(options.max_externals, self._probe_limit)
        self.probe_slots = asyncio.Semaphore(options.probe_concurrency)
        self.probe_wake = asyncio.Event()
        self.crawl_finished = False
        self.probe_tasks: set[asyncio.Task[None]] = set()
        self.probe_error: BaseException | None = None
        self.built_tasks: set[asyncio.Task[None]] = set()
        self.built_pending: set[asyncio.Future[Built]] = set()
        self.built_error: BaseException | None = None
        #: The next level as the level in hand's built pages tell it (Built.found): each new
        #: URL once, with where it was first found (page id, position) and its source; and how
        #: many of the level's pages were built by this run.
        self.news: dict[str, tuple[int, int, str]] = {}
        self.built_count = 0
        self.robots_row: tuple[str, int | None, str, str | None] | None = None
        self.trap_limits = options.trap_limits()
        #: Internal URLs not followed as crawler traps, with the reason (each counted once).
        self.trapped: dict[str, str] = {}
        #: This run continues a crawl file that has pages (its counts start from the file's).
        self.resumed = False

    # --- probes ------------------------------------------------------------------------------
    def _probe_limit(self, host: str) -> int:
        return self.concurrency if self.scope.contains(f"http://{host}/") else 1

    async def _register_probe(self, url: str, kind: str) -> None:
        """Queue a status check. ``kind``: one of _VIA_ORDER."""
        kinds = self.probe_kinds.get(url)
        if kinds is not None:
            kinds.add(kind)
            return
        internal = self.scope.contains(url)
        external_row = not internal or kind == "redirect"
        reg = self.probes.register(url, capped=external_row)
        if not reg.accepted:
            if reg.reason == "over_cap":
                # Known from now on: another link to it is not a second URL not checked (its
                # externals row is one; a resumed crawl preloads it from that row).
                self.probe_kinds[url] = {kind}
                self._count_not_checked("over_cap")
                ops: list[tuple[str, Any]] = [("count", ("not_checked", {"over_cap": 1}))]
                if external_row:
                    ops.append((
                        "external_result",
                        (url, kind, None, None, None, None, None, None, "over_cap"),
                    ))  # fmt: skip
                await self.sink.put("ops", ops)
            return
        self.probe_kinds[url] = {kind}
        if external_row:
            self.stats.externals_registered += 1
            await self.sink.put("external", (url, kind))
        self.probe_wake.set()

    def _count_not_checked(self, reason: str) -> None:
        self.stats.not_checked[reason] = self.stats.not_checked.get(reason, 0) + 1

    async def _probe_loop(self) -> None:
        while True:
            self.probe_wake.clear()
            await self.probe_slots.acquire()
            url = self.probes.next()
            if url is None:
                self.probe_slots.release()
                if (
                    self.crawl_finished
                    and not self.probes.pending()
                    and not self.probes.in_flight()
                ):
                    return
                await self.probe_wake.wait()
                continue
            task = asyncio.create_task(self._probe(url))
            self.probe_tasks.add(task)
            task.add_done_callback(self._probe_finished)

    def _probe_finished(self, task: asyncio.Task[None]) -> None:
        self.probe_tasks.discard(task)
        if not task.cancelled() and task.exception() is not None and self.probe_error is None:
            self.probe_error = task.exception()

    async def _probe(self, url: str) -> None:
        try:
            internal = self.scope.contains(url)
            if internal:
                # The audited site's robots.txt binds its assets as it binds its pages.
                async with self._site_turn():
                    result = await self._head_or_get(url, self.settings.obey_robots)
                if result[0].throttled:
                    # The site's instruction, whatever URL it came on: pages wait too.
                    self._throttled(
                        url, result[0], "status check counted as not checked (throttled)"
                    )
            else:
                result = await self._head_or_get(url)
            await self._record_probe(url, result)
        finally:
            self.probes.done(url)
            self.probe_slots.release()
            self.probe_wake.set()

    async def _head_or_get(
        self, url: str, check_robots: bool = False
    ) -> tuple[FetchResult, str]:
        result = await self.fetcher.fetch(
            url, method="HEAD", read_body=False, check_robots=check_robots
        )
        if result.status in (405, 501):
            result = await self.fetcher.fetch(
                url, method="GET", read_body=False, check_robots=check_robots
            )
            return result, "GET"
        return result, "HEAD"

    async def _record_probe(self, url: str, probed: tuple[FetchResult, str]) -> None:
        result, method = probed
        kinds = self.probe_kinds.get(url, set())
        internal = self.scope.contains(url)
        now = _now()
        not_checked = None
        error = f"{result.error_kind}: {result.error_detail}" if result.error_kind else None
        if result.error_kind in ("perimeter", "robots", "robots_unreachable"):
            not_checked = result.error_kind
            self._count_not_checked(result.error_kind)
        elif result.throttled:
            # 429 (or 503 + Retry-After) says when to ask, not whether the URL works: counted
            # as not checked with its reason, never reported broken.
            not_checked = "throttled"
            self._count_not_checked("throttled")
            after = result.headers.get("retry-after")
            error = f"throttled: {result.status}" + (f" (Retry-After {after})" if after else "")
        else:
            self.stats.externals_checked += 1
        # The check's rows and the count of its reason, in one transaction (see
        # CrawlFile.write_batch: counts travel with what they count).
        ops: list[tuple[str, Any]] = []
        if not_checked:
            ops.append(("count", ("not_checked", {not_checked: 1})))
        if not internal or "redirect" in kinds:
            hops = json.dumps([{"url": h.url, "status": h.status} for h in result.hops])
            via = next((k for k in _VIA_ORDER if k in kinds), "link")
            ops.append((
                "external_result",
                (url, via, result.status, result.final_url, hops, error, method,
                 None if not_checked else now, not_checked),
            ))  # fmt: skip
        size_header = result.headers.get("content-length")
        size = int(size_header) if size_header and size_header.isdigit() else None
        ctype = result.headers.get("content-type")
        if "image" in kinds:
            ops.append(("image_result", (result.status, ctype, size, error, now, url)))
        if "resource" in kinds:
            ops.append(("resource_result", (result.status, ctype, size, error, now, url)))
        if ops:
            await self.sink.put("ops", ops)

    # --- robots and sitemaps -----------------------------------------------------------------
    def _apply_robots(self, body: str) -> list[str]:
        """Crawl-delay into the pacer; the Sitemap: lines of robots.txt."""
        try:
            parsed = Protego.parse(body)
            delay = parsed.crawl_delay(self.settings.user_agent) or 0.0
            sitemaps = [u for u in (normalize(s) for s in parsed.sitemaps) if u]
        except Exception:  # a robots.txt protego cannot read gives us nothing to apply
            return []
        self.pacer.gap = max(self.settings.per_key_gap, float(delay))
        return sitemaps

    @asynccontextmanager
    async def _site_turn(self) -> AsyncIterator[None]:
        """One request to the audited site: a slot, then our turn under the pacer."""
        async with self.site_slots:
            await self.pacer.wait()
            yield

    async def _robots(self) -> list[str] | None:
        """Fetch robots.txt and apply it (its crawl-delay paces every page that follows); the
        sitemap files to read, or None when a resumed crawl file already holds them."""
        if self.options.resume:
            row = self.cf.conn.execute("SELECT body FROM robots").fetchone()
            if row is not None:
                self._apply_robots(row[0] or "")
                return None
        origin = self.start_url.split("/", 3)
        base = f"{origin[0]}//{origin[2]}"
        robots_url = base + "/robots.txt"
        async with self.site_slots:
            res = await self.fetcher.fetch(robots_url)
        body = res.body.decode("utf-8", "replace") if res.ok else ""
        self.robots_row = (
            robots_url, res.status, body,
            f"{res.error_kind}: {res.error_detail}" if res.error_kind else None,
        )  # fmt: skip
        sitemap_files = self._apply_robots(body) if body else []
        return sitemap_files or [base + "/sitemap.xml"]

    async def _sitemaps(self, sitemap_files: list[str] | None) -> bool:
        """Read and record the site's sitemaps while the pages are crawled: their URLs are
        needed only when the links run out (the URLs no link reached are the last level) and
        at the end (``in_sitemap``). ~0.1 s of fetching and parsing at 10,000 URLs no longer
        holds the first page back. Whether the crawl file holds a list to take leftovers from
        (the sitemaps were read, by this run or the one resumed).

        The URLs are not kept here: the crawl file has them, and the few no link reached are
        read back when they are needed (_sitemap_leftovers). Kept, they were ~1 MiB of this
        process's peak for the whole crawl at 10,000 URLs, and their transient more."""
        if sitemap_files is None:
            return True
        if self.options.use_sitemaps:
            await self._read_sitemaps(sitemap_files)
        # Whether the sitemaps were read: "none found" and "not looked for" read differently.
        read = "read" if self.options.use_sitemaps else "skipped"
        await self.sink.put("meta", ("sitemaps", read))
        # Last, after every sitemap row: a crawl file that holds its robots.txt holds its
        # sitemaps too (writes are applied in order), which is what a resumed crawl reads.
        await self.sink.put("robots", self.robots_row)
        return self.options.use_sitemaps

    async def _sitemap_leftovers(self, sitemaps: asyncio.Task[bool]) -> Iterator[str]:
        """The sitemaps' URLs of the site that no page row holds, in the order they were
        found (read from the crawl file as they are used)."""
        if not await sitemaps:
            return iter(())
        await self.sink.flush()  # the sitemap rows and every queued page are in the file
        contains = self.scope.contains
        return (u for u in self.cf.sitemap_urls_not_queued() if contains(u))

    async def _read_sitemaps(self, sitemap_files: list[str]) -> None:
        seen_urls: set[str] = set()
        seen_files: set[str] = set()
        todo = list(sitemap_files)
        while todo and len(seen_files) < _MAX_SITEMAP_FILES:
            sm = todo.pop(0)
            if sm in seen_files:
                continue
            seen_files.add(sm)
            async with self._site_turn():
                # sitemaps.org allows 50 MB uncompressed: more than a page's cap.
                res = await self.fetcher.fetch(
                    sm, check_robots=False, max_bytes=SITEMAP_MAX_BYTES
                )
            if not res.ok:
                err: str | None = (
                    f"{res.error_kind}: {res.error_detail}" if res.error_kind else "http"
                )
                await self.sink.put("sitemap", (sm, res.status, None, 0, err))
                continue
            kind, locs = _parse_sitemap(res.body)
            if kind == "sitemapindex":
                todo.extend(u for u in (normalize(x) for x in locs) if u)
                await self.sink.put("sitemap", (sm, res.status, kind, len(locs), None))
                continue
            found = []
            for n, loc in enumerate(locs, 1):
                if not n % 500:
                    # Normalising 10,000 URLs is ~0.1 s of this process: the first levels'
                    # pages go on meanwhile instead of waiting for the whole list.
                    await asyncio.sleep(0)
                u = normalize(loc)
                if u and u not in seen_urls:
                    seen_urls.add(u)
                    found.append((u, sm))
            err = None if kind else "not a sitemap"
            await self.sink.put("sitemap", (sm, res.status, kind, len(locs), err))
            await self.sink.put("sitemap_urls_many", found)

    # --- pages -------------------------------------------------------------------------------
    async def _fetch_page(self, page_id: int, url: str) -> None:
        for attempt in range(4):
            # _site_turn spelled out: a generator-based context manager per page is measurable.
            async with self.site_slots:
                await self.pacer.wait()
                if self.stats.waiting:
                    self._wait_over()
                result = await self.fetcher.fetch(
                    url, follow_redirects=False, check_robots=self.settings.obey_robots
                )
            if not result.throttled:
                break
            # A throttle is an instruction about the whole site: every worker waits (after the
            # last retry too), then this page is asked again (three times at most; then its
            # 429/503 is recorded).
            self._throttled(
                url, result,
                f"then asking again ({attempt + 1}/3)" if attempt < 3
                else "not asking again: recorded as throttled",
            )  # fmt: skip
            if attempt == 3:
                break
        await self._store_page(page_id, url, result)

    def _throttled(self, url: str, result: FetchResult, then: str) -> None:
        """The site throttled us: pause every request to it, and say so while it lasts."""
        after = result.headers.get("retry-after")
        now = datetime.now(UTC)
        seconds = throttle_wait(after, now)
        self.pacer.pause(seconds)
        until = (now + timedelta(seconds=seconds)).strftime("%Y-%m-%d %H:%M:%S")
        asked = f"Retry-After {after}" if after is not None else "no Retry-After"
        self.stats.throttle_waits += 1
        self.stats.waiting = (
            f"site throttled {url} ({result.status}, {asked}): waiting {seconds:.0f} s "
            f"until {until} UTC, {then}"
        )
        self._report()

    def _wait_over(self) -> None:
        if self.pacer.clock() >= self.pacer.paused_until:
            self.stats.waiting = ""
            self._report()

    async def _store_page(self, page_id: int, url: str, result: FetchResult) -> None:
        fetched = Fetched(
            url, result.status, result.error_kind, result.error_detail, dict(result.headers),
            result.body, result.bytes_read, result.duration,
        )  # fmt: skip
        pending = await self.sink.submit_page(page_id, fetched)
        if pending.done():
            await self._page_built(pending.result())
            return
        # Built in the other process: its reply is handled by a callback (a task only when it
        # has URLs to register), so this worker fetches the next page meanwhile. ``_flush``
        # waits for both before every flush.
        self.built_pending.add(pending)
        pending.add_done_callback(self._built_arrived)

    def _built_arrived(self, pending: asyncio.Future[Built]) -> None:
        self.built_pending.discard(pending)
        if pending.cancelled():
            return
        exc = pending.exception()
        if exc is not None:
            if self.built_error is None:
                self.built_error = exc
            return
        built = pending.result()
        if not built.probes:
            self._count_built(built)
            self._report()
            return
        task = asyncio.create_task(self._page_built(built))
        self.built_tasks.add(task)
        task.add_done_callback(self._built_finished)

    def _built_finished(self, task: asyncio.Task[None]) -> None:
        self.built_tasks.discard(task)
        if not task.cancelled() and task.exception() is not None and self.built_error is None:
            self.built_error = task.exception()

    async def _built(self) -> None:
        """Every page handed over is built and its probes registered."""
        # No page will join those held back for company (the level is fetched): they go now,
        # not when the send timer fires, with both processes idle until then.
        self.sink.push()
        while self.built_pending or self.built_tasks:
            # Our done-callbacks were added first, so they have run when gather returns.
            await asyncio.gather(
                *list(self.built_pending), *list(self.built_tasks), return_exceptions=True
            )
        if self.built_error is not None:
            raise AuditError(f"a page could not be built: {self.built_error}") from (
                self.built_error
            )

    async def _flush(self) -> None:
        """Every page handed over is built and its probes registered; then all is written."""
        await self._built()
        await self.sink.flush()

    def _count_built(self, built: Built) -> None:
        self.built_count += 1
        if built.found:
            # Merged as they come (pages are built out of id order): memory for each new URL
            # once, not for every page that links to it.
            news = self.news
            page_id = built.page_id
            for position, (url, src) in enumerate(built.found):
                seen = news.get(url)
                if seen is None or seen[0] > page_id:
                    news[url] = (page_id, position, src)
        self.stats.pages_done += 1
        self.stats.rows += built.rows
        for key, n in built.skipped.items():
            self.stats.links_skipped[key] = self.stats.links_skipped.get(key, 0) + n

    async def _page_built(self, built: Built) -> None:
        self._count_built(built)
        for purl, kind in built.probes:
            await self._register_probe(purl, kind)
        self._report()

    def _report(self) -> None:
        if self.progress is not None:
            self.stats.externals_pending = self.probes.pending() + self.probes.in_flight()
            self.progress(self.stats)

    # --- levels ------------------------------------------------------------------------------
    async def _queue_level(
        self, urls: list[tuple[str, str]], level: int, depth: int | None
    ) -> _Level:
        """Give the new ones of ``urls`` their ids and queue them as the next level.

        The level is returned rather than read back from the file: reading it back meant
        waiting for the writer to store it first (a flush and a query per level, ~45 ms at
        the big levels of a 10,000-page site, with both processes idle)."""
        rows = []
        todo = []
        for url, source in urls:
            if url in self.page_ids:
                continue
            page_id = self.next_id
            self.next_id += 1
            self.page_ids[url] = page_id
            rows.append((page_id, url, level, depth, source))
            todo.append((page_id, url))
        if rows:
            await self.sink.put("queue_many", rows)
        self.stats.pages_queued += len(todo)
        return _Level(todo, [page_id for page_id, _ in todo], depth if todo else None)

    def _stored_level(self, level: int) -> _Level:
        """A level as the crawl file holds it (a resumed crawl: some of its pages are done)."""
        rows = self.cf.conn.execute(
            "SELECT id, url, state, depth FROM pages WHERE level=? ORDER BY id", (level,)
        ).fetchall()
        return _Level(
            [(r[0], r[1]) for r in rows if r[2] == "queued"],
            [r[0] for r in rows],
            rows[0][3] if rows else None,
        )

    async def _next_level_urls(self, page_ids: list[int]) -> list[tuple[str, str]]:
        """Undiscovered internal targets of these pages, in breadth-first order, with source.

        The order is (parent id, link position), a redirect target before the parent's links:
        what a one-at-a-time crawl would have found first. Each built page brought back its
        own new targets (``Built.found``); a level some of whose pages were built before this
        run asks the crawl file, where SQLite does the grouping, so only the new URLs — not
        every link of the level — come into memory.
        """
        if not page_ids:
            return []
        contains = self.scope.contains
        known = self.page_ids
        news, self.news = self.news, {}
        built, self.built_count = self.built_count, 0
        if built == len(page_ids):
            # Every page of the level was built by this run: the candidates came back with
            # them, and the query (40-70 ms at the big levels of 10,000 pages, with the
            # writer idle and no fetch going) is not needed. A resumed level goes to the file.
            first_found = sorted(news.items(), key=lambda item: item[1])
            return [
                (url, src) for url, (_, _, src) in first_found
                if url not in known and contains(url) and not self._trap(url)
            ]  # fmt: skip
        await self.sink.flush()  # the query reads what the writer holds too
        rows = self.cf.next_level_candidates(min(page_ids), max(page_ids))
        return [
            (url, src) for url, src, _k in rows
            if url not in known and contains(url) and not self._trap(url)
        ]  # fmt: skip

    def _trap(self, url: str) -> bool:
        """A crawler trap (audit/traps.py): not followed, and counted once by its reason.

        Asked once per new internal URL of a level: each level's candidates are distinct,
        a followed one becomes a known page, a skipped one is remembered here."""
        if url in self.trapped:
            return True
        reason = trap_reason(url, self.trap_limits)
        if reason is None:
            return False
        self.trapped[url] = reason
        key = _TRAP + reason
        self.stats.links_skipped[key] = self.stats.links_skipped.get(key, 0) + 1
        return True

    def _room(self) -> bool:
        cap = self.options.max_pages
        return cap is None or self.pages_started < cap

    async def _run_level(self, todo: list[tuple[int, str]]) -> None:
        it = iter(todo)

        async def worker() -> None:
            # The slot is taken before the fetch, in id order: under --max-pages the same
            # first N pages are crawled whatever the completion order.
            while self._room():
                item = next(it, None)
                if item is None:
                    return
                self.pages_started += 1
                await self._fetch_page(*item)

        await asyncio.gather(*(worker() for _ in range(self.concurrency)))

    async def run(self) -> CrawlStats:
        self.sink.start()
        probe_loop = asyncio.create_task(self._probe_loop())
        try:
            await self._crawl()
            await self._flush()
            await self._register_uncrawled_redirect_targets()
            self.crawl_finished = True
            self.probe_wake.set()
            await probe_loop
            if self.probe_tasks:
                await asyncio.gather(*self.probe_tasks)
            if self.probe_error is not None:
                raise AuditError(f"a status check failed: {self.probe_error}") from (
                    self.probe_error
                )
            await self._flush()  # the writer is idle from here on: one writer at a time
            await self.sink.finalize()
            self._counts_of_the_file()
            # Last: a file with finished_at is complete (in_sitemap, redirect far ends known).
            self.cf.set_meta(
                finished_at=_now(),
                cut_short=self.stats.cut_short,
                not_checked=self.stats.not_checked,
                links_skipped=self.stats.links_skipped,
            )
            self.stats.waiting = ""  # nothing is waiting any more
            self._report()
            return self.stats
        finally:
            if not probe_loop.done():
                probe_loop.cancel()
            for task in [*self.probe_tasks, *self.built_tasks]:
                task.cancel()
            await self.sink.aclose()

    def _counts_of_the_file(self) -> None:
        """What was not followed or not checked, for the whole crawl file: a resumed crawl's
        own counts miss what came before the kill. The writer added the counts of links and
        checks to the file with the rows they count (CrawlFile.write_batch); crawler traps are
        a decision on the URL alone, asked again of what the file's pages found when this run
        resumed one (in a crawl of one run, its count is that already)."""
        meta = self.cf.get_meta()
        skipped = {
            k: n for k, n in json.loads(meta.get("links_skipped") or "{}").items()
            if not k.startswith(_TRAP)
        }  # fmt: skip
        if self.resumed:
            contains = self.scope.contains
            for url in self.cf.targets_not_crawled():
                reason = trap_reason(url, self.trap_limits) if contains(url) else None
                if reason is not None:
                    key = _TRAP + reason
                    skipped[key] = skipped.get(key, 0) + 1
            # The summary's "N pages, M URLs status-checked" is the file's: its pages were,
            # and this run's checks alone read "2045 pages, 11 URLs status-checked".
            self.stats.externals_checked = self.cf.checked_count()
        else:
            # A trap URL a sitemap also lists is crawled from there (a list someone wrote is
            # finite): it was not skipped after all.
            known = self.page_ids
            for url, reason in self.trapped.items():
                if url not in known:
                    key = _TRAP + reason
                    skipped[key] = skipped.get(key, 0) + 1
        self.stats.links_skipped = skipped
        self.stats.not_checked = json.loads(meta.get("not_checked") or "{}")

    async def _register_uncrawled_redirect_targets(self) -> None:
        rows = self.cf.conn.execute(
            "SELECT r.to_url FROM redirects r LEFT JOIN pages p ON p.url = r.to_url "
            "WHERE r.to_internal = 1 AND (p.state IS NULL OR p.state != 'done') "
            "ORDER BY r.rowid"
        ).fetchall()
        for (url,) in rows:
            await self._register_probe(url, "redirect")

    async def _crawl(self) -> None:
        sitemaps = asyncio.create_task(self._sitemaps(await self._robots()))
        try:
            await self._crawl_levels(sitemaps)
        finally:
            if not sitemaps.done():
                sitemaps.cancel()
            # Its outcome retrieved either way (a failure of its own is raised by the await
            # in _crawl_levels; one after the crawl failed would be logged as never retrieved).
            await asyncio.gather(sitemaps, return_exceptions=True)

    async def _crawl_levels(self, sitemaps: asyncio.Task[bool]) -> None:
        sitemap_level_done = False
        if self.options.resume and self._load_state():
            self.resumed = True
            level = max(lvl for _, _, lvl, _, _ in self.cf.pages_index())
            sitemap_level_done = bool(
                self.cf.conn.execute("SELECT 1 FROM pages WHERE source='sitemap'").fetchone()
            )
            current = self._stored_level(level)
        else:
            level = 0
            current = await self._queue_level([(self.start_url, "start")], 0, 0)
        while True:
            await self._run_level(current.todo)
            # Built, not written: the next level needs only the candidates that came back with
            # the pages, and the writer goes on with its batch meanwhile (a flush here cost
            # 20-50 ms at each big level with the fetchers idle).
            await self._built()
            next_urls = await self._next_level_urls(current.ids)
            if not self._room():
                await self.sink.flush()
                left = self.cf.conn.execute(
                    "SELECT 1 FROM pages WHERE state='queued' LIMIT 1"
                ).fetchone()
                if (
                    left
                    or next_urls
                    or next(await self._sitemap_leftovers(sitemaps), None) is not None
                ):
                    self.stats.cut_short = "max_pages"
                return
            depth = current.depth
            next_depth = None if depth is None else depth + 1
            max_depth = self.options.max_depth
            if (
                next_urls
                and max_depth is not None
                and (next_depth is None or next_depth > max_depth)
            ):
                # Past the depth, or linked from pages listed only in a sitemap: their click
                # depth is unknown, so their links may lead anywhere past it.
                self.stats.cut_short = "max_depth"
                next_urls = []
            if not next_urls and not sitemap_level_done:
                sitemap_level_done = True
                await sitemaps  # read (and recorded) whether or not crawled
                # Sitemap pages no link reached: orphans when the links ran out on their own;
                # with the crawl cut at the depth they may only lie deeper, so they wait.
                leftovers = (
                    []
                    if self.stats.cut_short == "max_depth"
                    else list(await self._sitemap_leftovers(sitemaps))
                )
                if leftovers:
                    level += 1
                    current = await self._queue_level(
                        [(u, "sitemap") for u in leftovers], level, None
                    )
                    continue
            if not next_urls:
                return
            level += 1
            current = await self._queue_level(next_urls, level, next_depth)

    def _load_state(self) -> bool:
        index = self.cf.pages_index()
        if not index:
            return False
        for page_id, url, _level, _depth, state in index:
            self.page_ids[url] = page_id
            if state == "done":
                self.stats.pages_done += 1
                self.pages_started += 1
        self.stats.pages_queued = len(index)
        self.next_id = index[-1][0] + 1
        for url, via, checked_at, not_checked in self.cf.externals_state():
            capped = not self.scope.contains(url) or via == "redirect"
            if checked_at is not None or not_checked is not None:
                self.probes.preload(url, capped=capped)
                self.probe_kinds[url] = {via}
            else:
                self.probes.register(url, capped=capped)
                self.probe_kinds[url] = {via}
        for table, kind in (("images", "image"), ("resources", "resource")):
            for url in self.cf.unchecked_assets(table):
                if url in self.probe_kinds:
                    self.probe_kinds[url].add(kind)
                    continue
                self.probes.register(url, capped=not self.scope.contains(url))
                self.probe_kinds[url] = {kind}
        for table, kind in (("images", "image"), ("resources", "resource")):
            for url in self.cf.asset_ids(table):
                kinds = self.probe_kinds.get(url)
                if kinds is not None:
                    kinds.add(kind)
        self.probe_wake.set()
        return True


#: The key prefix of crawler traps' counts in ``links_skipped`` ("trap: url_too_long").
_TRAP = "trap: "
#: Requests in flight to the audited site, at most (``--concurrency``; the default,
#: ``per_host_in_flight``, is held to it too).
MAX_CONCURRENCY = 1024
#: Lowest value of each numeric option (None: no limit, where None is allowed).
_OPTION_MINIMUM = {
    "max_pages": 1, "max_depth": 0, "concurrency": 1, "probe_concurrency": 1,
    "max_externals": 0, "batch_size": 1,
    # One repeat is every path with a segment: nothing past the start URL would be crawled.
    "trap_max_url_length": 1, "trap_max_segment_repeats": 2, "trap_max_parameters": 0,
}  # fmt: skip


def _check_options(options: CrawlOptions) -> None:
    """What the CLI bounds, the library checks too: 0 pages is no crawl, and a zero-sized
    semaphore (concurrency 0) waits forever."""
    for name, minimum in _OPTION_MINIMUM.items():
        value = getattr(options, name)
        if value is not None and value < minimum:
            raise InputError(f"{name}={value}", f"must be at least {minimum}")
    if options.concurrency is not None and options.concurrency > MAX_CONCURRENCY:
        raise InputError(
            f"concurrency={options.concurrency}", f"must be at most {MAX_CONCURRENCY}"
        )


def _use_parse_process(asked: bool | None) -> bool:
    if asked is not None:
        return asked
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return cores >= 2


async def crawl_site(
    start_url: str,
    out: str | Path,
    settings: Settings,
    options: CrawlOptions | None = None,
    *,
    fetcher: FetcherLike | None = None,
    progress: Callable[[CrawlStats], None] | None = None,
) -> CrawlStats:
    """Crawl the site of ``start_url`` into the crawl file ``out``; see the module docstring."""
    options = options or CrawlOptions()
    _check_options(options)
    url = normalize(start_url)
    if url is None:
        raise InvalidURLError(start_url, "not an http(s) URL with a host")
    path = Path(out)
    if path.is_dir():  # noqa: ASYNC240 (one stat before the crawl)
        raise AuditError(f"{str(path)!r} is a directory: name the crawl file in it")
    if not path.parent.is_dir():
        # SQLite's own word for it is "unable to open database file", which names no cause.
        raise AuditError(f"{str(path)!r}: directory {str(path.parent)!r} does not exist")
    created = not path.exists()  # noqa: ASYNC240 (one stat before the crawl)
    if not created and not options.resume:
        raise AuditError(f"{str(path)!r} exists: pass --resume to continue it, or remove it")
    cf = CrawlFile(path)
    nothing_to_audit: str | None = None
    try:
        meta = cf.get_meta()
        if options.resume and meta.get("start_url") not in (None, url):
            raise AuditError(
                f"{str(path)!r} is a crawl of {meta.get('start_url')!r}, not of {url!r}"
            )
        scope_was = meta.get("registrable_domain")
        if options.resume and scope_was not in (None, json.dumps(options.registrable_domain)):
            was = "its registrable domain (--domain)" if scope_was == "true" else "its host only"
            raise AuditError(
                f"{str(path)!r} is a crawl of {url!r} scoped to {was}: resume it with the same "
                "--domain setting, or start a new crawl file"
            )
        written_with = meta.get("sketch_version", "1")
        if options.resume and written_with != SKETCH_VERSION and cf.has_pages():
            # Near duplicates would go unseen between the old pages and the new ones.
            older = written_with.isdigit() and int(written_with) < int(SKETCH_VERSION)
            raise AuditError(
                f"{str(path)!r} was written by {'an older' if older else 'another'} fairfetch "
                f"(near-duplicate sketches v{written_with}, this one makes v{SKETCH_VERSION}): "
                "start a new crawl file to compare every page; this one is left as it is"
            )
        cf.clear_meta("finished_at")  # until this run completes, the file is not finished
        cf.set_meta(
            start_url=url,
            registrable_domain=options.registrable_domain,
            max_pages=options.max_pages,
            max_depth=options.max_depth,
            started_at=meta.get("started_at") or _now(),
            sketch_version=SKETCH_VERSION,
            # What the crawl did not follow as a trap: the rules ask the same question later.
            trap_limits=options.trap_limits().to_json(),
        )
        if fetcher is None:
            async with Fetcher(settings) as own:
                stats = await _Crawl(url, cf, settings, options, own, progress).run()
        else:
            stats = await _Crawl(url, cf, settings, options, fetcher, progress).run()
        nothing_to_audit = _nothing_to_audit(cf, options)
    finally:
        cf.close()
    if nothing_to_audit is None:
        return stats
    # Not a report of one failed page or one redirect: nothing was audited. A file this run
    # created would only stand in the way of the next try ("exists: pass --resume").
    if created:
        for leftover in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
            leftover.unlink(missing_ok=True)
    raise AuditError(
        nothing_to_audit + ("" if created else f" (the crawl file {str(path)!r} is kept)")
    )


def _nothing_to_audit(cf: CrawlFile, options: CrawlOptions) -> str | None:
    """Why the finished crawl holds no site to judge, or None."""
    unreachable = cf.out_of_reach()
    if unreachable is not None:
        page, error = unreachable
        return f"start URL {page!r} could not be fetched ({error}): nothing to audit"
    lone = cf.lone_redirect()
    if lone is None:
        return None
    page, status, target = lone
    scope = Scope(page, registrable_domain=options.registrable_domain)
    if scope.contains(target):
        return None
    hint = "" if options.registrable_domain else (
        ", or pass --domain to audit its whole registrable domain"
    )
    return (
        f"start URL {page!r} redirects ({status}) to {target!r}, outside the audited site "
        f"({scope.domain}): nothing to audit; start from {target!r}{hint}"
    )
