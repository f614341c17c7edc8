"""A feed advertising a hub on an address the perimeter refuses (127.0.0.2, when only
127.0.0.1/32 is allowed), or an allowed hub that 307-redirects our form there: nothing connects
to it, the subscription records why and is retried later, and the feed is polled as before.
Real listeners on 127.0.0.1 and 127.0.0.2 count what reaches them."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from aiohttp import web

from fairfetch.store import websub_repo as repo

from .conftest import Subscriber

ATOM = """<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>p</title>
<id>tag:p.test,2026:f</id><updated>2026-11-01T00:00:00Z</updated>
<link rel="hub" href="{hub}"/><link rel="self" href="{self}"/></feed>"""


async def _serve(app: web.Application, host: str) -> tuple[web.AppRunner, str]:
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, host, 0)
    try:
        await site.start()
    except OSError:
        await runner.cleanup()
        pytest.skip(f"{host} cannot be bound here")
    return runner, f"http://{host}:{runner.addresses[0][1]}"


@pytest.fixture
async def far() -> AsyncIterator[tuple[str, list[str]]]:
    """A hub on 127.0.0.2 that accepts anything: (its URL, the requests it saw)."""
    seen: list[str] = []

    async def hub(request: web.Request) -> web.Response:
        seen.append(request.method + " " + request.path)
        return web.Response(status=202)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", hub)
    runner, base = await _serve(app, "127.0.0.2")
    try:
        yield base + "/hub", seen
    finally:
        await runner.cleanup()


@pytest.mark.parametrize("via", ["advertised", "hop"])
async def test_websub_hub_on_a_refused_address_is_never_contacted(
    subscriber: Subscriber, far: tuple[str, list[str]], via: str
) -> None:
    far_hub, seen = far
    near: list[str] = []
    app = web.Application()
    urls: dict[str, str] = {}

    async def topic(_request: web.Request) -> web.Response:
        hub = far_hub if via == "advertised" else urls["base"] + "/hop"
        return web.Response(body=ATOM.format(hub=hub, self=urls["base"] + "/t").encode(),
                            content_type="text/xml")

    async def hop(request: web.Request) -> web.Response:
        near.append(request.method)
        raise web.HTTPTemporaryRedirect(far_hub)  # 307: the same form, re-POSTed there

    app.router.add_get("/t", topic)
    app.router.add_post("/hop", hop)
    runner, urls["base"] = await _serve(app, "127.0.0.1")
    try:
        outcome = await subscriber.service.subscribe_url(urls["base"] + "/t")
    finally:
        await runner.cleanup()
    assert seen == []  # not one connection reached 127.0.0.2
    assert near == ([] if via == "advertised" else ["POST"])
    assert outcome.subscription is not None
    rec = repo.get_subscription(subscriber.store, outcome.subscription.id)
    assert rec is not None
    assert rec.state == "expired"  # never verified: the feed is polled at the normal interval
    assert rec.last_error is not None
    assert "perimeter" in rec.last_error
    assert rec.next_action_at is not None  # asked again later, with backoff
