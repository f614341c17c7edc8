"""A robots.txt that redirects into an address the perimeter refuses (a reverse proxy leaking
its upstream, ``Location: http://127.0.0.1:8080/robots.txt``) is a redirect we will not
follow, like one past the redirect cap or to an ``ftp:`` URL: RFC 9309 §2.3.1.2 lets us take
robots.txt as unavailable ("no rules"). It was taken as the feed's own refusal: every feed of
the origin failed with kind ``perimeter`` — the heaviest failure weight, dead after ten
crawls — although each feed's own address was allowed and answering. The hop is still not
made; a refused origin (no redirect) is still ``perimeter`` (test_net_robots.py)."""

from __future__ import annotations

import pytest
from aiohttp import web

from .conftest import FORBIDDEN, answer_ok, make_fetcher, net_settings, raw_server, serve


async def feed(request: web.Request) -> web.Response:
    return web.Response(text="<rss/>")


async def test_a_robots_redirect_into_a_refused_address_is_no_rules_not_the_feeds_failure() -> None:
    f = make_fetcher(net_settings())
    try:
        async with raw_server(answer_ok, host="127.0.0.2") as guarded:

            async def robots(request: web.Request) -> web.Response:
                raise web.HTTPMovedPermanently(f"http://{FORBIDDEN}:{guarded.port}/robots.txt")

            async with serve({"/robots.txt": robots, "/feed": feed}) as srv:  # type: ignore[dict-item]
                r = await f.fetch(srv.url("/feed"), check_robots=True)
                rules = f.robots.cached(srv.url("/"))
    finally:
        await f.aclose()
    assert guarded.accepts == 0  # the refused hop is never made
    assert r.error_kind is None
    assert r.ok
    assert r.body == b"<rss/>"
    assert rules is not None
    assert rules.state == "allow_all"
    assert rules.expires_at - rules.fetched_at == pytest.approx(f.robots.ttl)
    assert "perimeter" in rules.detail


async def test_a_robots_redirect_to_a_host_that_does_not_resolve_defers_not_fails_as_dns() -> None:
    """The feed's host answers; robots.txt sends us to a name that does not resolve (the test
    resolver knows only *.test): the feed is not read (RFC 9309 §2.3.1.4), and the refusal
    is robots.txt's (``robots_unreachable``), not a DNS failure of the feed."""

    async def robots(request: web.Request) -> web.Response:
        raise web.HTTPFound("http://cdn.gone.invalid/robots.txt")

    f = make_fetcher(net_settings())
    try:
        async with serve({"/robots.txt": robots, "/feed": feed}) as srv:  # type: ignore[dict-item]
            r = await f.fetch(srv.url("/feed"), check_robots=True)
            assert srv.hits["/feed"] == 0
    finally:
        await f.aclose()
    assert r.error_kind == "robots_unreachable"
    assert "dns" in r.error_detail
