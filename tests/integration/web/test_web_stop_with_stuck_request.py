"""Stopping the directory (Ctrl-C, SIGTERM: ``stop`` set) ends it even while a request is
stuck: uvicorn's graceful shutdown waited for every open request without limit, so one add
whose crawl never returned made ``fairfetch serve`` ignore every further Ctrl-C."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

import httpx

from fairfetch.config import Settings
from fairfetch.store import open_store
from fairfetch.web.serve import serve

from .conftest import TOKEN


class _StuckCrawler:
    """A crawler whose add never finishes (the request handler waits on it forever)."""

    def __init__(self) -> None:
        self.entered = asyncio.Event()
        self.cancelled = False

    async def add(self, urls: list[str]) -> object:
        self.entered.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        raise AssertionError("unreachable")

    def snapshot(self) -> dict[str, object]:
        return {}


async def test_web_stop_ends_serve_despite_a_stuck_request(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path}/stuck.db")
    settings = Settings(db=store.url, admin_token=TOKEN, total_timeout=0.5)
    crawler = _StuckCrawler()
    stop = asyncio.Event()
    started: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    server = asyncio.create_task(
        serve(settings, store, crawler, stop, host="127.0.0.1", port=0,
              on_started=started.set_result)
    )
    try:
        url = await asyncio.wait_for(started, 30)
        async with httpx.AsyncClient(timeout=None) as client:
            request = asyncio.create_task(
                client.post(
                    url + "/api/v1/feeds",
                    json={"url": "http://stuck.example.test/feed.xml"},
                    headers={"Authorization": f"Bearer {TOKEN}"},
                )
            )
            await asyncio.wait_for(crawler.entered.wait(), 30)
            stop.set()
            # A hang guard, not a timing: serve() must return at all.
            await asyncio.wait_for(server, 60)
            assert crawler.cancelled
            with contextlib.suppress(httpx.HTTPError):
                answer = await asyncio.wait_for(request, 30)
                assert answer.status_code >= 500
    finally:
        stop.set()
        if not server.done():
            server.cancel()
            with contextlib.suppress(BaseException):
                await server
        store.close()
