"""robots.txt through the Fetcher: allow, deny, crawl-delay, 4xx/5xx policy, caching, perimeter."""

from __future__ import annotations

from aiohttp import web

from fairfetch.net.outcome import FetchResult
from fairfetch.net.robots import RobotsCache, RobotsCopy, agent_token

from .conftest import FORBIDDEN, answer_ok, make_fetcher, net_settings, raw_server, serve

ROBOTS = b"""
User-agent: *
Disallow: /private
Crawl-delay: 5

User-agent: otherbot
Disallow: /
"""


def robots_route(status: int = 200, body: bytes = ROBOTS) -> object:
    async def handler(request: web.Request) -> web.Response:
        return web.Response(status=status, body=body, content_type="text/plain")

    return handler


async def page(request: web.Request) -> web.Response:
    return web.Response(text=f"page {request.path}")


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_allow_deny_and_crawl_delay() -> None:
    clock = FakeClock()
    robots = RobotsCache(clock=clock)
    f = make_fetcher(net_settings(), robots=robots)
    try:
        async with serve(
            {"/robots.txt": robots_route(), "/public": page, "/private/x": page}  # type: ignore[dict-item]
        ) as srv:
            allowed = await f.fetch(srv.url("/public"), check_robots=True)
            denied = await f.fetch(srv.url("/private/x"), check_robots=True)
            unchecked = await f.fetch(srv.url("/private/x"))  # check_robots defaults to False
            delay = await robots.crawl_delay(srv.url("/public"))
    finally:
        await f.aclose()
    assert allowed.ok
    assert allowed.body == b"page /public"
    assert denied.error_kind == "robots"
    assert "robots.txt" in denied.error_detail
    assert unchecked.ok
    assert srv.hits["/private/x"] == 1  # only the unchecked fetch reached it
    assert srv.hits["/robots.txt"] == 1  # cached across the three checks
    assert delay == 5.0


async def test_cache_ttl_refetches_after_expiry() -> None:
    clock = FakeClock()
    robots = RobotsCache(clock=clock, ttl=100.0)
    f = make_fetcher(net_settings(), robots=robots)
    try:
        async with serve({"/robots.txt": robots_route(), "/p": page}) as srv:  # type: ignore[dict-item]
            await f.fetch(srv.url("/p"), check_robots=True)
            clock.now += 99.0
            await f.fetch(srv.url("/p"), check_robots=True)
            assert srv.hits["/robots.txt"] == 1
            clock.now += 2.0
            await f.fetch(srv.url("/p"), check_robots=True)
            assert srv.hits["/robots.txt"] == 2
            # another origin (other host) has its own entry
            await f.fetch(srv.url("/p", host="other.test"), check_robots=True)
            assert srv.hits["/robots.txt"] == 3
    finally:
        await f.aclose()


async def test_missing_robots_allows_everything() -> None:
    f = make_fetcher(net_settings())
    try:
        async with serve({"/robots.txt": robots_route(404, b"nope"), "/private/x": page}) as srv:  # type: ignore[dict-item]
            r = await f.fetch(srv.url("/private/x"), check_robots=True)
    finally:
        await f.aclose()
    assert r.ok


async def test_server_error_on_robots_disallows_briefly() -> None:
    clock = FakeClock()
    robots = RobotsCache(clock=clock, error_ttl=60.0)
    f = make_fetcher(net_settings(), robots=robots)
    state = {"status": 503}

    async def flaky_robots(request: web.Request) -> web.Response:
        return web.Response(status=state["status"], body=ROBOTS)

    try:
        async with serve({"/robots.txt": flaky_robots, "/public": page}) as srv:
            r = await f.fetch(srv.url("/public"), check_robots=True)
            # Not "robots": nothing was forbidden, the server failed (see crawl/health.py).
            assert r.error_kind == "robots_unreachable"
            assert "503" in r.error_detail
            assert srv.hits["/public"] == 0
            state["status"] = 200
            clock.now += 61.0  # "briefly": asked again after error_ttl
            r2 = await f.fetch(srv.url("/public"), check_robots=True)
            assert r2.ok
            # a later outage keeps the last good copy instead of disallowing everything
            state["status"] = 500
            robots.invalidate()
            r3 = await f.fetch(srv.url("/public"), check_robots=True)
            assert r3.error_kind == "robots_unreachable"  # invalidated: no copy to fall back on
    finally:
        await f.aclose()


def test_interpret_keeps_last_good_copy_during_outage() -> None:
    robots = RobotsCache(ttl=100.0, error_ttl=10.0, stale_for=1000.0)
    origin = "http://site.test"
    good = robots.interpret(
        origin, FetchResult(url=origin, final_url=origin, status=200, body=ROBOTS), 0.0
    )
    down = FetchResult(url=origin, final_url=origin, status=503)
    during = robots.interpret(origin, down, 500.0, good)
    assert during.state == "parsed"
    assert during.expires_at == 510.0
    assert during.can_fetch(origin + "/public", "fairfetch")
    assert not during.can_fetch(origin + "/private", "fairfetch")
    too_old = robots.interpret(origin, down, 2000.0, good)
    assert too_old.state == "disallow_all"
    unreachable = robots.interpret(
        origin,
        FetchResult(url=origin, final_url=origin, error_kind="timeout", error_detail="slow"),
        0.0,
    )
    assert unreachable.state == "disallow_all"
    assert unreachable.error_kind == "timeout"
    throttled = robots.interpret(origin, FetchResult(url=origin, final_url=origin, status=429), 0.0)
    assert throttled.state == "disallow_all"  # 429 is "unavailable", like Google
    forbidden = robots.interpret(origin, FetchResult(url=origin, final_url=origin, status=403), 0.0)
    assert forbidden.state == "allow_all"


def test_agent_token() -> None:
    assert agent_token("fairfetch/0.1 (+https://example.org)") == "fairfetch"
    assert agent_token("MyBot") == "MyBot"


async def test_agent_specific_group_applies() -> None:
    robots = RobotsCache(user_agent="otherbot/2.0")
    f = make_fetcher(net_settings(), robots=robots)
    try:
        async with serve({"/robots.txt": robots_route(), "/public": page}) as srv:  # type: ignore[dict-item]
            r = await f.fetch(srv.url("/public"), check_robots=True)
    finally:
        await f.aclose()
    assert r.error_kind == "robots"


async def test_robots_of_a_refused_origin_is_a_perimeter_failure() -> None:
    f = make_fetcher(net_settings())
    try:
        async with raw_server(answer_ok, host="127.0.0.2") as guarded:
            r = await f.fetch(f"http://{FORBIDDEN}:{guarded.port}/feed", check_robots=True)
    finally:
        await f.aclose()
    assert r.error_kind == "perimeter"
    assert guarded.accepts == 0


async def test_obey_robots_off_skips_the_check() -> None:
    f = make_fetcher(net_settings(obey_robots=False))
    try:
        async with serve({"/robots.txt": robots_route(), "/private/x": page}) as srv:  # type: ignore[dict-item]
            r = await f.fetch(srv.url("/private/x"), check_robots=True)
    finally:
        await f.aclose()
    assert r.ok
    assert srv.hits["/robots.txt"] == 0


async def test_robots_over_the_size_cap_keeps_its_first_rules() -> None:
    # A robots.txt over the cap is read up to the cap (Google: the first 500 KiB count), not
    # taken as empty. A static file comes with a Content-Length, and declaring a size over the
    # cap must not turn the publisher's Disallow into "allow everything".
    big = b"User-agent: *\nDisallow: /private\n" + b"# padding\n" * 2000
    robots = RobotsCache(max_bytes=4096)
    f = make_fetcher(net_settings(), robots=robots)
    try:
        async with serve({"/robots.txt": robots_route(200, big), "/private/x": page}) as srv:  # type: ignore[dict-item]
            r = await f.fetch(srv.url("/private/x"), check_robots=True)
            direct = await f.fetch(srv.url("/robots.txt"), max_bytes=4096)
    finally:
        await f.aclose()
    assert direct.error_kind == "too_large"
    assert direct.body == big[:4096]  # the prefix up to the cap, as the chunked path gives
    assert r.error_kind == "robots"
    assert srv.hits["/private/x"] == 0


async def test_a_byte_order_mark_does_not_hide_the_first_group() -> None:
    # Windows editors save robots.txt with a UTF-8 BOM; Google ignores it. Kept, it glued
    # itself to "User-agent" and protego dropped the group: everything was allowed.
    body = b"\xef\xbb\xbfUser-agent: *\nDisallow: /private\n"
    robots = RobotsCache()
    f = make_fetcher(net_settings(), robots=robots)
    try:
        async with serve({"/robots.txt": robots_route(200, body), "/private/x": page}) as srv:  # type: ignore[dict-item]
            r = await f.fetch(srv.url("/private/x"), check_robots=True)
    finally:
        await f.aclose()
    assert r.error_kind == "robots"
    assert srv.hits["/private/x"] == 0
    # A copy kept by an earlier version, BOM and all, means the same once restored.
    copy = RobotsCopy("http://site.test", "parsed", 200, "\ufeffUser-agent: *\nDisallow: /p", 0.0)
    assert not robots.restore(copy).can_fetch("http://site.test/p/1", "fairfetch")


async def test_a_cancelled_first_asker_does_not_cancel_the_others() -> None:
    """Concurrent asks for one origin share one robots.txt fetch. The first asker's fetch can
    be cancelled (its total-time cap, a shutdown) while others wait on the same answer: they
    got a CancelledError out of ``fetch`` (which never raises for network trouble), a feed
    handler that never finished, and a crawl pass waiting for it for ever."""
    import asyncio

    arrived = asyncio.Event()
    release = asyncio.Event()

    async def slow_robots(request: web.Request) -> web.Response:
        arrived.set()
        await release.wait()
        return web.Response(status=404)

    f = make_fetcher(net_settings())
    try:
        async with serve({"/robots.txt": slow_robots, "/a": page, "/b": page}) as srv:
            first = asyncio.create_task(f.fetch(srv.url("/a"), check_robots=True))
            await arrived.wait()  # the first asker's robots.txt request is at the server
            second = asyncio.create_task(f.fetch(srv.url("/b"), check_robots=True))
            await asyncio.sleep(0)  # (a yield, not a wait) the second now waits on that fetch
            first.cancel()
            release.set()
            r = await second
            assert first.cancelled()
    finally:
        await f.aclose()
    assert r.ok
    assert r.body == b"page /b"
    assert srv.hits["/robots.txt"] == 1
