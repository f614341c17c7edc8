"""A hub that answers our subscribe POST with 301/302/303: the Fetcher follows it as a GET (what
browsers and RFC 9110 do), so the form never reaches a hub. A 2xx to that bare GET (a hub's home
page) is not "the hub will verify": it must be recorded as a failed request, with the reason,
and retried with backoff, never left pending with no error. Real HTTP on loopback."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import pytest
from aiohttp import web

from fairfetch.store import websub_repo as repo

from .conftest import Subscriber


@contextlib.asynccontextmanager
async def moved_hub(code: int) -> AsyncIterator[tuple[str, list[tuple[str, str]]]]:
    """``/t`` advertises hub ``/hub``, which answers ``code`` to ``/home`` (200 to a GET)."""
    seen: list[tuple[str, str]] = []

    async def topic(request: web.Request) -> web.Response:
        base = f"http://{request.host}"
        return web.Response(
            body=(f'<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>t</title>'
                  f'<link rel="hub" href="{base}/hub"/><link rel="self" href="{base}/t"/>'
                  f"</feed>").encode(),
            content_type="application/atom+xml",
        )

    async def hub(request: web.Request) -> web.Response:
        seen.append((request.method, request.path))
        return web.Response(status=code, headers={"Location": "/home"})

    async def home(request: web.Request) -> web.Response:
        seen.append((request.method, request.path))
        return web.Response(text="<html>Welcome to our hub</html>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/t", topic)
    app.router.add_post("/hub", hub)
    app.router.add_route("*", "/home", home)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        yield f"http://127.0.0.1:{runner.addresses[0][1]}", seen
    finally:
        await runner.cleanup()


@pytest.mark.parametrize("code", [301, 302, 303])
async def test_websub_hub_redirect_that_drops_the_form_is_a_failed_request(
    subscriber: Subscriber, code: int
) -> None:
    async with moved_hub(code) as (base, seen):
        outcome = await subscriber.service.subscribe_url(f"{base}/t")
    # the form went to /hub, and only a bare GET reached /home
    assert seen == [("POST", "/hub"), ("GET", "/home")]
    assert outcome.subscription is not None
    rec = repo.get_subscription(subscriber.store, outcome.subscription.id)
    assert rec is not None
    assert rec.state == "expired"  # a failed subscribe: polled, retried with backoff
    assert rec.last_error is not None
    assert str(code) in rec.last_error
    assert f"{base}/home" in rec.last_error
    assert outcome.detail == rec.last_error
    assert rec.attempts == 1
