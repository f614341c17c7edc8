"""``audit crawl``'s crawler-trap flags reach the crawl, and its summary says what they kept
out. A soft-404 site on 127.0.0.1 (port 0, served from a thread: the CLI runs its own event
loop) whose broken relative link makes /blog/blog/blog/... for ever."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from aiohttp import web
from typer.testing import CliRunner

from fairfetch.cli import app
from fairfetch.testing import loopback_server

ENV = {"FAIRFETCH_ALLOW_NETWORKS": "127.0.0.1/32", "FAIRFETCH_RESOLVE": "*.test:127.0.0.1"}


async def _handle(request: web.Request) -> web.Response:
    if request.path in ("/robots.txt", "/sitemap.xml"):
        return web.Response(status=404)
    links = '<a href="/blog/">blog</a>' if request.path == "/" else '<a href="blog/">b</a>'
    return web.Response(text=f"<html><head><title>{request.path}</title></head><body>{links}"
                        "</body></html>", content_type="text/html")


@contextmanager
def _site(
    handler: Callable[[web.Request], Awaitable[web.Response]] = _handle,
) -> Iterator[int]:
    loop = asyncio.new_event_loop()
    port: list[int] = []
    ready, stop = threading.Event(), asyncio.Event()

    async def serve() -> None:
        async with loopback_server(handler) as p:
            port.append(p)
            ready.set()
            await stop.wait()

    thread = threading.Thread(target=loop.run_until_complete, args=(serve(),), daemon=True)
    thread.start()
    ready.wait()
    try:
        yield port[0]
    finally:
        loop.call_soon_threadsafe(stop.set)
        thread.join()
        loop.close()


def _crawl(port: int, out: Path, *flags: str) -> str:
    r = CliRunner().invoke(
        app, ["audit", "crawl", f"http://spiral.test:{port}/", "--out", str(out),
              "--max-pages", "40", "--in-process", *flags],
        env=ENV,
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    return r.output


def test_cli_audit_crawl_cuts_a_spiral_and_says_so(tmp_path: Path) -> None:
    with _site() as port:
        out = _crawl(port, tmp_path / "a.crawl")
    assert "not followed (crawler traps): {'trap: repeated_path_segment': 1}" in out
    assert "cut short" not in out
    assert "3 pages" in out  # /, /blog/, /blog/blog/


def test_cli_audit_crawl_trap_flags_reach_the_crawl(tmp_path: Path) -> None:
    with _site() as port:
        off = _crawl(port, tmp_path / "off.crawl", "--trap-max-repeats", "0")
        five = _crawl(port, tmp_path / "five.crawl", "--trap-max-repeats", "5")
    assert "cut short by max_pages" in off  # no limit: the spiral runs to the page cap
    assert "crawler traps" not in off
    assert "5 pages" in five
    assert "crawler traps" in five


async def _query_site(request: web.Request) -> web.Response:
    if request.path in ("/robots.txt", "/sitemap.xml"):
        return web.Response(status=404)
    links = '<a href="/q?a=1">q</a>' if request.path == "/" else ""
    return web.Response(text=f"<html><head><title>t</title></head><body>{links}</body></html>",
                        content_type="text/html")


def test_cli_audit_crawl_trap_max_parameters_0_is_no_limit(tmp_path: Path) -> None:
    """0 turns each of the three tests off: "more than 0 parameters" kept out every URL with
    a query."""
    with _site(_query_site) as port:
        out = _crawl(port, tmp_path / "q.crawl", "--trap-max-parameters", "0")
    assert "2 pages" in out
    assert "crawler traps" not in out
