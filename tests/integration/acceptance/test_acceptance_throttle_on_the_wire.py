"""Issue 2, "What must be shown": Retry-After in every form *as a server sends it*, through the
fetch engine, the crawler and the store, on feeds with a history (a success, then a failure).

The unit tests pin ``parse_retry_after`` and ``decide`` one at a time, and the crawl tests throttle
feeds that were never read (every health column still empty, so a write that blanked one would
go unseen). Here each feed first succeeds, then fails, then is throttled: every column holds a
value a wrong write would change, and the schedule is read to the second with a stepped clock.
"""

from __future__ import annotations

from dataclasses import asdict
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

from aiohttp import web

from fairfetch.crawl import Crawler
from fairfetch.net.politeness import politeness_key
from fairfetch.store import SqlStore
from fairfetch.testing import loopback_server

from .conftest import StepClock, loopback_settings

RSS = (
    b'<?xml version="1.0"?><rss version="2.0"><channel><title>T</title>'
    b"<link>http://x.test/</link><item><guid>one</guid><title>one</title></item>"
    b"</channel></rss>"
)


def _http_date(delta: timedelta) -> str:
    return format_datetime(datetime.now(UTC) + delta, usegmt=True)


def _rfc850(delta: timedelta) -> str:
    return (datetime.now(UTC) + delta).strftime("%A, %d-%b-%y %H:%M:%S GMT")


def _asctime(delta: timedelta) -> str:
    t = datetime.now(UTC) + delta
    return t.strftime("%a %b ") + f"{t.day:2d}" + t.strftime(" %H:%M:%S %Y")


# host -> (status, Retry-After header or None, lowest and highest clamped seconds expected)
THROTTLES: dict[str, tuple[int, object, float, float]] = {
    "zero": (429, "0", 60, 60),
    "seconds": (429, "120", 120, 120),
    "ten-days-date": (429, lambda: _http_date(timedelta(days=10)), 86400, 86400),
    "ten-days-seconds": (429, str(10 * 86400), 86400, 86400),
    "garbage": (429, "in a little while", 1800, 1800),
    "absent": (429, None, 1800, 1800),
    "past-date": (429, lambda: _http_date(-timedelta(hours=3)), 60, 60),
    "rfc850": (429, lambda: _rfc850(timedelta(hours=2)), 7198, 7200),
    "asctime": (429, lambda: _asctime(timedelta(hours=2)), 7198, 7200),
    "maintenance": (503, "300", 300, 300),
}

#: Columns a throttle may move: the schedule, and the count of attempts (a throttle is one).
MAY_MOVE = {"next_crawl_at", "crawl_count"}


async def test_acceptance_every_retry_after_form_reschedules_and_touches_no_health_column(
    store: SqlStore, clock: StepClock
) -> None:
    phase = {"now": "ok"}

    async def handle(request: web.Request) -> web.StreamResponse:
        if request.path == "/robots.txt":
            return web.Response(status=404)
        host = request.host.split(".")[0]
        if phase["now"] == "ok":
            return web.Response(body=RSS, content_type="application/rss+xml",
                                headers={"ETag": f'"{host}-v1"'})
        if phase["now"] == "fail":
            return web.Response(status=500, text="oops")
        if phase["now"] == "404":
            return web.Response(status=404, text="gone missing")
        status, value, _, _ = THROTTLES[host]
        headers = {}
        if value is not None:
            headers["Retry-After"] = value() if callable(value) else str(value)
        return web.Response(status=status, headers=headers, text="slow down")

    async with loopback_server(handle) as port:
        settings = loopback_settings(store.url)
        urls = {h: f"http://{h}.test:{port}/feed" for h in THROTTLES}
        for url in urls.values():
            store.add_feed(url, now=clock.now, politeness_key=politeness_key(url))

        async def refresh() -> None:
            async with Crawler(store, settings, clock=clock) as crawler:
                summary = await crawler.refresh(list(urls.values()))
            assert summary.accounted == summary.due == len(urls)

        t_ok = clock.now = clock.now + timedelta(hours=1)
        await refresh()
        phase["now"] = "fail"
        t_fail = clock.now = clock.now + timedelta(hours=1)
        await refresh()
        before = {h: store.get_feed(u) for h, u in urls.items()}
        for h, feed in before.items():  # a history in every column a throttle must not touch
            assert feed.status == "error", h
            assert feed.error_count == 1, h
            assert (feed.last_error or "").startswith("http"), h
            assert feed.last_success_at == t_ok, h
            assert feed.last_fetched_at == t_fail, h
            assert feed.etag == f'"{h}-v1"', h

        phase["now"] = "throttle"
        t_throttle = clock.now = clock.now + timedelta(hours=1)
        await refresh()
        for h, url in urls.items():
            after = store.get_feed(url)
            old, new = asdict(before[h]), asdict(after)
            moved = {k for k in old if old[k] != new[k]} - MAY_MOVE
            assert moved == set(), (h, {k: (old[k], new[k]) for k in moved})
            _, _, low, high = THROTTLES[h]
            assert after.next_crawl_at is not None, h
            waited = (after.next_crawl_at - t_throttle).total_seconds()
            assert low <= waited <= high, (h, waited)

        # While a 404 still counts against the feed (on a key whose pause has ended).
        phase["now"] = "404"
        clock.now = clock.now + timedelta(days=2)
        still = urls["zero"]
        store_feed = store.get_feed(still)
        async with Crawler(store, settings, clock=clock) as crawler:
            summary = await crawler.refresh([still])
        assert summary.accounted == 1
        counted = store.get_feed(still)
        assert counted.status == "error", summary
        assert counted.error_count == store_feed.error_count + 1
        assert "404" in (counted.last_error or "")
        assert counted.last_fetched_at == clock.now
        assert counted.last_success_at == t_ok
