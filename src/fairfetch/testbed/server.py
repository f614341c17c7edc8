"""The simulated web: one aiohttp server on one loopback port, routing on the Host header.

Every virtual host is described by a :class:`~fairfetch.testbed.catalog.Site` built from the seed;
the request handler counts the request (per host, registrable domain and platform), lets any test
gate hold it, and answers with the site's behaviour. Feed bodies are cached per (host, path,
entry count) so a crawl of thousands of feeds costs one rendering per feed and publication.
"""

from __future__ import annotations

import asyncio
import contextlib
import fnmatch
import importlib
import json
import math
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from email.utils import parsedate_to_datetime
from typing import Any
from xml.sax.saxutils import quoteattr

from aiohttp import web

from fairfetch.config import Settings
from fairfetch.testbed import payloads, registry
from fairfetch.testbed.catalog import LONG_CHAIN, FeedSpec, Site, build_sites, select
from fairfetch.testbed.clock import TestbedClock
from fairfetch.testbed.options import TestbedOptions
from fairfetch.testbed.ratelimit import TokenBucket
from fairfetch.testbed.render import (
    Rendered,
    entries_at,
    entry_count,
    http_date,
    render_feed,
    render_home,
)
from fairfetch.testbed.stats import Stats

__all__ = ["CONTROL_HOST", "Gate", "Testbed"]

#: The host serving ``/_testbed/stats``, ``/_testbed/reset``, ``/_testbed/clock``, the catalogue.
CONTROL_HOST = "control.test"
_CONTROL_HOSTS = frozenset({CONTROL_HOST, "127.0.0.1", "localhost"})
_RSS = "application/rss+xml; charset=utf-8"
_CACHE_SIZE = 8192
_JPEG = b"\xff\xd8\xff\xe0" + b"\x00" * 120 + b"\xff\xd9"
_MP3 = b"ID3\x03\x00\x00\x00\x00\x00\x00" + b"\xff\xfb" * 2000


def _hostname(raw: str) -> str:
    host = raw.strip().lower()
    if host.startswith("["):
        return host.split("]", 1)[0] + "]"
    return host.rsplit(":", 1)[0].rstrip(".") if ":" in host else host.rstrip(".")


class Gate:
    """Holds matching requests inside the server (already counted in flight) until opened.

    Lets a test observe concurrency without sleeping: wait until N requests have arrived, read
    the stats, then open the gate. ``open()`` may be called from any thread.
    """

    def __init__(self, testbed: Testbed, match: Callable[[str], bool]) -> None:
        self._testbed = testbed
        self.matches = match
        self.arrived = 0
        self._opened = asyncio.Event()
        self._changed = asyncio.Condition()
        self._loop: asyncio.AbstractEventLoop | None = testbed._loop

    async def _pass(self) -> None:
        async with self._changed:
            self.arrived += 1
            self._changed.notify_all()
        await self._opened.wait()

    async def wait_arrived(self, n: int) -> None:
        """Wait (in the testbed's loop) until ``n`` matching requests are held or went through."""
        async with self._changed:
            await self._changed.wait_for(lambda: self.arrived >= n)

    def wait_arrived_blocking(self, n: int, timeout: float | None = None) -> None:
        """:meth:`wait_arrived` for a thread other than the testbed's (``testbed_thread``)."""
        if self._loop is None:
            raise RuntimeError("the testbed is not running")
        future = asyncio.run_coroutine_threadsafe(self.wait_arrived(n), self._loop)
        future.result(timeout)

    def open(self) -> None:
        """Let every held and future matching request through; the gate is then removed."""
        loop = self._loop
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if loop is not None and running is not loop:
            loop.call_soon_threadsafe(self._open)
        else:
            self._open()

    def _open(self) -> None:
        self._opened.set()
        with contextlib.suppress(ValueError):
            self._testbed._gates.remove(self)

    async def __aenter__(self) -> Gate:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.open()


class Testbed:
    """The running simulated web. Use :func:`fairfetch.testing.running_testbed` to get one."""

    __test__ = False

    def __init__(
        self,
        seed: int = 1,
        *,
        port: int = 0,
        families: Iterable[registry.HostFamily] = (),
        **options: Any,
    ) -> None:
        self.seed = seed
        self.options = TestbedOptions(**options)
        self.clock = TestbedClock(self.options.start, realtime=self.options.realtime)
        self.sites: dict[str, Site] = build_sites(seed, self.options)
        self.bucket = TokenBucket(self.options.letterbox_rate, self.options.letterbox_burst)
        self.base_port = port
        self._requested_port = port
        self._extra_families = list(families)
        self._families: list[Any] = []
        self._stats = Stats()
        self._cache: OrderedDict[tuple[str, str, int], Rendered] = OrderedDict()
        self._gates: list[Gate] = []
        self._throttles = 0
        self._specs: tuple[tuple[int, int], list[FeedSpec]] | None = None
        self._runner: web.AppRunner | None = None
        self._closing: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    # --- public API ---------------------------------------------------------------------------

    def url(self, host: str, path: str = "/") -> str:
        """``http://host:port/path`` of a virtual host on this testbed."""
        if not path.startswith("/"):
            path = "/" + path
        return f"http://{host}:{self.base_port}{path}"

    def env(self, **extra: str) -> dict[str, str]:
        """Environment variables that let a fairfetch subprocess reach the testbed."""
        return {
            "FAIRFETCH_RESOLVE": "*.test:127.0.0.1",
            "FAIRFETCH_ALLOW_NETWORKS": "127.0.0.1/32",
            **extra,
        }

    def settings(self, **overrides: Any) -> Settings:
        """Settings that reach the testbed (and nothing else on loopback) plus ``overrides``."""
        values: dict[str, Any] = {
            "allow_networks": ("127.0.0.1/32",),
            "resolve": ("*.test:127.0.0.1",),
        }
        values.update(overrides)
        return Settings(**values)

    async def stats(self) -> dict[str, Any]:
        """What the server saw: ``total`` and per ``hosts`` / ``domains`` / ``platforms``."""
        return self.snapshot()

    def snapshot(self) -> dict[str, Any]:
        """Same as :meth:`stats`, for synchronous callers (e.g. with ``testbed_thread``)."""
        data = self._stats.snapshot()
        data["clock"] = self.clock.now()
        return data

    def reset_stats(self) -> None:
        """Zero the counters and refill the platform rate limits."""
        self._stats.reset()
        self.bucket.refill()
        self._throttles = 0

    def catalog(
        self, n: int | None = None, behaviours: Iterable[str] | None = None
    ) -> list[FeedSpec]:
        """Every feed (healthy families interleaved first, edge cases last), or a subset.

        ``behaviours`` filters by behaviour name (a trailing ``*`` matches a prefix, e.g.
        ``"redirect-*"``); ``n`` keeps the first ``n`` that remain.
        """
        return select(self._all_specs(), n, behaviours)

    def hold(self, hosts: str | Iterable[str] | Callable[[str], bool]) -> Gate:
        """Hold requests to matching hosts (glob patterns or a predicate) until the gate opens."""
        if callable(hosts):
            match = hosts
        else:
            patterns = [hosts] if isinstance(hosts, str) else list(hosts)

            def match(host: str) -> bool:
                return any(fnmatch.fnmatchcase(host, p) for p in patterns)

        gate = Gate(self, match)
        self._gates.append(gate)
        return gate

    def opml(self, specs: Iterable[FeedSpec] | None = None) -> str:
        specs = self.catalog() if specs is None else specs
        lines = [
            '<?xml version="1.0" encoding="utf-8"?>',
            '<opml version="2.0"><head>'
            f"<title>fairfetch testbed (seed {self.seed})</title></head><body>",
        ]
        for s in specs:
            text = quoteattr(s.title or s.host)
            lines.append(
                f"<outline type=\"rss\" text={text} title={text} xmlUrl={quoteattr(s.url)} "
                f"category={quoteattr(s.behaviour)}/>"
            )
        lines.append("</body></opml>")
        return "\n".join(lines) + "\n"

    # --- lifecycle ----------------------------------------------------------------------------

    async def start(self) -> None:
        for module in registry.PLUGIN_MODULES:
            try:
                importlib.import_module(module)
            except ModuleNotFoundError as exc:
                if exc.name != module:
                    raise
        self._families = [*self._extra_families, *registry.families()]
        self._loop = asyncio.get_running_loop()
        self._closing = asyncio.Event()
        app = web.Application(client_max_size=1 << 20)
        app[CONTEXT] = self
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(
            app, handle_signals=False, access_log=None, handler_cancellation=True,
            shutdown_timeout=1.0,
        )
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", self._requested_port, backlog=1024)
        await site.start()
        self.base_port = int(self._runner.addresses[0][1])

    async def stop(self) -> None:
        if self._closing is not None:
            self._closing.set()
        for gate in list(self._gates):
            gate._open()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> Testbed:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # --- request handling ---------------------------------------------------------------------

    def base(self, host: str) -> str:
        return f"http://{host}:{self.base_port}"

    def _family_for(self, host: str) -> Any:
        for family in self._families:
            if family.matches(host):
                return family
        return None

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        host = _hostname(request.host)
        if host in _CONTROL_HOSTS:
            return await self._control(request)
        site = self.sites.get(host)
        family = None if site is not None else self._family_for(host)
        platform = site.platform if site is not None else getattr(family, "platform", None)
        headers = request.headers
        conditional = "If-None-Match" in headers or "If-Modified-Since" in headers
        counters = self._stats.begin(host, platform, conditional=conditional)
        status: int | None = None
        try:
            for gate in list(self._gates):
                if gate.matches(host):
                    await gate._pass()
            # Simulated round trip, not a sync. Without latency, still one turn of the loop:
            # a handler that never yields runs start to end alone, so requests a client sent
            # together were never in flight together here (max_in_flight stayed 1 whatever
            # the client did, and the politeness assertions on it could not fail).
            latency = self.options.latency
            await asyncio.sleep(latency if latency > 0 else 0)
            if site is not None:
                resp = await self._serve(request, site)
            elif family is not None:
                resp = await family.handle(request, host)
            else:
                resp = web.Response(status=404, text=f"no host {host!r} in the testbed\n")
            status = resp.status
            if not resp.prepared:
                # Written here, not by aiohttp after the handler returns: the request stays in
                # flight until its body is handed over (a body over the socket buffers waits
                # for the client to read it). A client hanging up mid-body was still answered
                # ``status``; aiohttp sees the closed connection when it finishes the response.
                with contextlib.suppress(ConnectionError):
                    await resp.prepare(request)
                    await resp.write_eof()
            return resp
        except web.HTTPException as exc:
            status = exc.status
            raise
        except Exception:
            status = 500  # a family's bug: aiohttp answers 500, so count it as one
            raise
        finally:
            self._stats.end(counters, status)

    async def _serve(self, request: web.Request, site: Site) -> web.StreamResponse:
        if site.platform == "letterbox":
            resp: web.StreamResponse
            if not self.bucket.take():
                resp = self._throttle()
            else:
                resp = await self._behave(request, site)
            resp.headers["x-platform"] = "letterbox"
            return resp
        return await self._behave(request, site)

    def _throttle(self) -> web.Response:
        """429, alternating the two Retry-After forms RFC 9110 allows."""
        delay = self.options.letterbox_retry_after
        self._throttles += 1
        if self._throttles % 2:
            retry_after = str(delay)
        else:
            retry_after = http_date(math.ceil(time.time()) + delay)
        return web.Response(
            status=429, text="Too Many Requests\n", headers={"Retry-After": retry_after}
        )

    async def _behave(self, request: web.Request, site: Site) -> web.StreamResponse:
        path = request.path
        b = site.behaviour
        base = self.base(site.host)
        if path == "/robots.txt":
            return web.Response(text=_ROBOTS.get(b, _ROBOTS[""]))
        if b.startswith("redirect-") or b == "new-feed-url":
            resp = self._redirects(request, site, path, base)
            if resp is not None:
                return resp
        elif b.startswith("status-") or b == "blocked-403":
            if path == site.feed_path:
                return self._error(b)
        elif b in _PAYLOADS and path == site.feed_path:
            return await _PAYLOADS[b](self, request, site, base)
        elif b == "html-discovery" and path == "/":
            return web.Response(
                body=payloads.html_page(base, site.title, "/feed.xml"),
                content_type="text/html", charset="utf-8",
            )
        if site.kind is not None and path in (site.feed_path, site.final_path):
            return self._feed(request, site, path)
        return self._page(site, path, base)

    def _redirects(
        self, request: web.Request, site: Site, path: str, base: str
    ) -> web.StreamResponse | None:
        b = site.behaviour
        if b == "new-feed-url":
            if path == site.feed_path:
                extra = f"<itunes:new-feed-url>{base}/moved-feed</itunes:new-feed-url>\n"
                return self._feed(request, site, path, extra_channel=extra)
            return None
        if b in ("redirect-301", "redirect-308", "redirect-302", "redirect-307"):
            if path == "/feed":
                return _redirect(int(b[-3:]), base + "/feed-new")
            return None
        if b == "redirect-loop":
            if path == "/feed":
                return _redirect(301, base + "/loop")
            if path == "/loop":
                return _redirect(302, base + "/feed")
            return None
        hops = 3 if b == "redirect-chain" else LONG_CHAIN
        codes = (301, 302, 307, 308)
        if path == "/feed":
            return _redirect(codes[0], base + "/hop/1")
        if path.startswith("/hop/"):
            try:
                n = int(path[5:])
            except ValueError:
                return None
            if 1 <= n < hops:
                return _redirect(codes[n % 4], base + f"/hop/{n + 1}")
            if n == hops:
                return self._feed(request, site, path)
        return None

    def _error(self, behaviour: str) -> web.Response:
        if behaviour == "blocked-403":
            return web.Response(
                status=403,
                text="<!DOCTYPE html><html><head><title>Just a moment...</title></head>"
                "<body>Checking your browser</body></html>",
                content_type="text/html",
                headers={"cf-mitigated": "challenge", "Server": "cloudflare"},
            )
        code = int(behaviour.split("-")[1])
        headers = {"Retry-After": "120"} if behaviour == "status-503-retry" else {}
        return web.Response(status=code, text=f"status {code}\n", headers=headers)

    def _rendered(self, site: Site, path: str, extra_channel: str = "") -> Rendered:
        count = entry_count(site, self.clock.start, self.clock.now())
        key = (site.host, path, count)
        cached = self._cache.get(key)
        if cached is not None:
            self._cache.move_to_end(key)
            return cached
        entries = entries_at(self.seed, site, self.clock.start, count, self.options.items)
        rendered = render_feed(
            site, self.base(site.host), path, entries, extra_channel=extra_channel
        )
        self._cache[key] = rendered
        if len(self._cache) > _CACHE_SIZE:
            self._cache.popitem(last=False)
        return rendered

    def _feed(
        self, request: web.Request, site: Site, path: str, *, extra_channel: str = ""
    ) -> web.Response:
        r = self._rendered(site, path, extra_channel)
        headers = {"Content-Type": r.content_type}
        if site.etag:
            headers["ETag"] = r.etag
        if site.last_modified and r.last_modified is not None:
            headers["Last-Modified"] = http_date(r.last_modified)
        if site.behaviour == "hint-max-age":
            headers["Cache-Control"] = "max-age=7200"
        if _not_modified(request, site, r):
            del headers["Content-Type"]
            return web.Response(status=304, headers=headers)
        return web.Response(body=r.body, headers=headers)

    def _page(self, site: Site, path: str, base: str) -> web.Response:
        if path == "/":
            feed_path = site.final_path or site.feed_path if site.kind else None
            r = render_home(site, base, feed_path)
            return web.Response(body=r.body, headers={"Content-Type": r.content_type})
        if path.startswith("/p/"):
            r = render_home(site, base, site.feed_path if site.kind else None)
            return web.Response(body=r.body, headers={"Content-Type": r.content_type})
        if path.startswith("/img/") or path == "/cover.jpg":
            return web.Response(body=_JPEG, content_type="image/jpeg")
        if path.startswith("/episodes/"):
            return web.Response(body=_MP3, content_type="audio/mpeg")
        return web.Response(status=404, text="not found\n")

    # --- pathological payloads ----------------------------------------------------------------

    async def _slow_drip(self, request: web.Request, site: Site, base: str) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": _RSS})
        await resp.prepare(request)
        if request.method == "HEAD":  # the headers a GET gets; a body would desync keep-alive
            await resp.write_eof()
            return resp
        closing = self._closing
        assert closing is not None
        try:
            await resp.write(payloads.BOMB_PREFIX)
            while not closing.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(closing.wait(), self.options.drip_interval)
                await resp.write(b" ")
        except (ConnectionResetError, ConnectionError):
            pass
        return resp

    async def _no_answer(self, request: web.Request, site: Site, base: str) -> web.Response:
        # The handler is cancelled when the client hangs up (handler_cancellation) and woken
        # when the testbed stops; until then the client sees an open, silent connection.
        assert self._closing is not None
        await self._closing.wait()
        return web.Response(status=503)

    async def _gzip_bomb(self, request: web.Request, site: Site, base: str) -> web.Response:
        body = await asyncio.to_thread(payloads.gzip_bomb, self.options.gzip_bomb_bytes)
        return web.Response(body=body, headers={"Content-Type": _RSS, "Content-Encoding": "gzip"})

    async def _huge(self, request: web.Request, site: Site, base: str) -> web.StreamResponse:
        head, item, tail, repeats, length = payloads.huge_chunks(
            base, self.options.huge_body_bytes
        )
        resp = web.StreamResponse(headers={"Content-Type": _RSS})
        resp.content_length = length
        await resp.prepare(request)
        if request.method == "HEAD":
            await resp.write_eof()
            return resp
        try:
            await resp.write(head)
            for _ in range(repeats):
                await resp.write(item)
            await resp.write(tail)
            await resp.write_eof()
        except (ConnectionResetError, ConnectionError):
            pass
        return resp

    async def _static(self, request: web.Request, site: Site, base: str) -> web.Response:
        b = site.behaviour
        if b == "malformed":
            body = payloads.malformed(base)
        elif b == "mis-encoded":
            body = payloads.mis_encoded(base)
        elif b == "entity-bomb":
            body = payloads.entity_bomb(base)
        else:  # html-page
            return web.Response(
                body=payloads.html_page(base, site.title, None),
                content_type="text/html", charset="utf-8",
            )
        return web.Response(body=body, headers={"Content-Type": _RSS})

    # --- control host -------------------------------------------------------------------------

    async def _control(self, request: web.Request) -> web.Response:
        path = request.path
        if path == "/_testbed/stats":
            return _json(self.snapshot())
        if path == "/_testbed/reset":
            if request.method != "POST":
                return web.Response(status=405, headers={"Allow": "POST"})
            self.reset_stats()
            return _json({"ok": True})
        if path == "/_testbed/clock":
            if request.method == "POST":
                try:
                    args: dict[str, Any] = dict(request.query)
                    if request.can_read_body:
                        args.update(await request.json())
                    if "advance" in args:
                        self.clock.advance(float(args["advance"]))
                    elif "set" in args:
                        self.clock.set(float(args["set"]))
                except (ValueError, TypeError) as exc:
                    return _json({"error": str(exc)}, status=400)
            now = self.clock.now()
            return _json({"now": now, "http_date": http_date(now)})
        if path in ("/_testbed/catalog.opml", "/_testbed/catalog.json"):
            n = request.query.get("n")
            wanted = request.query.get("behaviours")
            try:
                count = int(n) if n else None
                specs = self.catalog(count, wanted.split(",") if wanted else None)
            except ValueError:
                return web.Response(
                    status=400, text=f"n={n!r}: a count of feeds (0 or more) is wanted\n"
                )
            if path.endswith(".json"):
                return _json([vars(s) for s in specs])
            return web.Response(text=self.opml(specs), content_type="text/x-opml")
        if path == "/":
            return web.Response(text=_CONTROL_INDEX, content_type="text/plain")
        return web.Response(status=404, text="unknown control endpoint\n")

    def _all_specs(self) -> list[FeedSpec]:
        key = (self.base_port, len(self._families))
        if self._specs is None or self._specs[0] != key:
            self._specs = (key, self._build_specs())
        return self._specs[1]

    def _build_specs(self) -> list[FeedSpec]:
        groups: dict[str, list[FeedSpec]] = {}
        edges: list[FeedSpec] = []
        for site in self.sites.values():
            spec = site.spec(self.base(site.host))
            family = site.behaviour.split("-")[0]
            if family in ("blog", "letterbox", "podcast", "growing"):
                groups.setdefault(family, []).append(spec)
            else:
                edges.append(spec)
        ordered: list[FeedSpec] = []
        lists = list(groups.values())
        for i in range(max((len(x) for x in lists), default=0)):
            ordered.extend(x[i] for x in lists if i < len(x))
        ordered.extend(edges)
        for family in self._families:
            extra = getattr(family, "catalog", None)
            if extra is not None:
                ordered.extend(extra(self))
        return ordered


def _not_modified(request: web.Request, site: Site, r: Rendered) -> bool:
    """RFC 9110 §13.2.2: If-None-Match decides when present, else If-Modified-Since."""
    inm = request.headers.get("If-None-Match")
    if inm is not None:
        # Present, it decides: a feed that sends no tags matches none (If-Modified-Since is
        # then not looked at).
        if not site.etag:
            return False
        tags = [t.strip().removeprefix("W/") for t in inm.split(",")]
        return "*" in tags or r.etag in tags
    ims = request.headers.get("If-Modified-Since")
    if ims is not None and site.last_modified and r.last_modified is not None:
        try:
            since = parsedate_to_datetime(ims).timestamp()
        except (TypeError, ValueError, IndexError):
            return False
        return int(r.last_modified) <= since
    return False


def _redirect(code: int, location: str) -> web.Response:
    return web.Response(status=code, headers={"Location": location}, text="moved\n")


def _json(data: Any, status: int = 200) -> web.Response:
    return web.Response(
        text=json.dumps(data, sort_keys=True), status=status, content_type="application/json"
    )


_PAYLOADS: dict[str, Callable[..., Any]] = {
    "slow-drip": Testbed._slow_drip,
    "no-answer": Testbed._no_answer,
    "gzip-bomb": Testbed._gzip_bomb,
    "huge-body": Testbed._huge,
    "malformed": Testbed._static,
    "mis-encoded": Testbed._static,
    "entity-bomb": Testbed._static,
    "html-page": Testbed._static,
}

#: ``request.app[CONTEXT]`` is the running :class:`Testbed` (for families' handlers).
CONTEXT = web.AppKey("fairfetch.testbed", Testbed)

_ROBOTS = {
    "": "User-agent: *\nAllow: /\n",
    "robots-disallow": "User-agent: *\nDisallow: /feed\n",
    "robots-crawl-delay": "User-agent: *\nCrawl-delay: 2\nAllow: /\n",
}

_CONTROL_INDEX = """fairfetch testbed control host
GET  /_testbed/stats                  what the server saw (per host, domain, platform)
POST /_testbed/reset                  zero the counters, refill rate limits
GET  /_testbed/clock                  the testbed clock
POST /_testbed/clock?advance=SECONDS  move it forward (or JSON {"advance": s} / {"set": t})
GET  /_testbed/catalog.opml[?n=N&behaviours=a,b*]   the feeds, as OPML (also catalog.json)
"""
