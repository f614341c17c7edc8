"""robots.txt answers on the wire, per RFC 9309 §2.3.1: redirects, a throttle, a cut-off body."""

from __future__ import annotations

import asyncio

import pytest
from aiohttp import web

from .conftest import RawServer, make_fetcher, net_settings, raw_server, serve

ROBOTS = b"User-agent: *\nDisallow: /private\n"


async def page(request: web.Request) -> web.Response:
    return web.Response(text="page")


async def test_a_robots_txt_reached_in_five_redirects_across_hosts_is_obeyed() -> None:
    # §2.3.1.2: follow at least five redirects, even across authorities; the rules found apply
    # to the origin asked about.
    async def hop(request: web.Request) -> web.Response:
        n = int(request.query.get("n", "0"))
        host = "b.test" if n % 2 == 0 else "a.test"
        port = request.url.port
        target = f"http://{host}:{port}/hop?n={n + 1}" if n < 4 else f"http://b.test:{port}/rules"
        raise web.HTTPFound(target)

    async def rules(request: web.Request) -> web.Response:
        return web.Response(body=ROBOTS, content_type="text/plain")

    f = make_fetcher(net_settings())
    try:
        routes = {"/robots.txt": hop, "/hop": hop, "/rules": rules, "/public": page}
        async with serve(routes) as srv:  # type: ignore[arg-type]
            ok = await f.fetch(srv.url("/public", host="a.test"), check_robots=True)
            refused = await f.fetch(srv.url("/private/x", host="a.test"), check_robots=True)
            assert srv.hits["/rules"] == 1
            assert srv.hits["/hop"] == 4  # robots.txt + 4 hops + the rules: 5 redirects
    finally:
        await f.aclose()
    assert ok.ok
    assert refused.error_kind == "robots"
    assert srv.hits["/private/x"] == 0


async def test_a_429_on_robots_txt_throttles_the_request_and_fetches_nothing_else() -> None:
    async def robots(request: web.Request) -> web.Response:
        return web.Response(status=429, headers={"Retry-After": "120"})

    f = make_fetcher(net_settings())
    try:
        async with serve({"/robots.txt": robots, "/feed": page}) as srv:  # type: ignore[arg-type]
            r = await f.fetch(srv.url("/feed"), check_robots=True)
    finally:
        await f.aclose()
    assert r.throttled
    assert r.error_kind is None  # a throttle, not a failure of the feed
    assert r.retry_after is not None
    assert 0 < r.retry_after <= 120.0  # what is left of it
    assert srv.hits["/feed"] == 0


async def test_a_robots_txt_cut_off_mid_body_is_not_taken_as_no_rules() -> None:
    # The 200 and half a line arrive, then the connection drops: that is no answer (disallow
    # for now), not "no robots.txt" cached for a day with everything allowed.
    async def cut_off(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter, state: RawServer
    ) -> None:
        request = await reader.readuntil(b"\r\n\r\n")
        state.requests += 1
        if b"/robots.txt" in request.split(b"\r\n", 1)[0]:
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\nUser-agent: *\nDis")
        else:
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        await writer.drain()

    f = make_fetcher(net_settings())
    try:
        async with raw_server(cut_off) as srv:
            r = await f.fetch(srv.url("/private/x", host="site.test"), check_robots=True)
            rules = f.robots.cached(srv.url("/", host="site.test"))
    finally:
        await f.aclose()
    assert srv.requests == 1  # robots.txt only
    assert r.error_kind == "connect"  # the robots.txt fetch's own failure: the host's
    assert rules is not None
    assert rules.state == "disallow_all"
    assert rules.expires_at - rules.fetched_at == pytest.approx(f.robots.error_ttl)


async def test_a_robots_txt_past_the_redirect_cap_is_no_rules() -> None:
    # §2.3.1.2: past the redirects a crawler follows, it MAY assume robots.txt unavailable
    # (4xx: everything allowed); a loop is the same.
    async def loop(request: web.Request) -> web.Response:
        raise web.HTTPFound("/robots.txt")

    f = make_fetcher(net_settings())
    try:
        async with serve({"/robots.txt": loop, "/private/x": page}) as srv:  # type: ignore[arg-type]
            r = await f.fetch(srv.url("/private/x"), check_robots=True)
            rules = f.robots.cached(srv.url("/"))
    finally:
        await f.aclose()
    assert r.ok
    assert rules is not None
    assert rules.state == "allow_all"
    assert rules.expires_at - rules.fetched_at == pytest.approx(f.robots.ttl)
