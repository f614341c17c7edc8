"""Small real servers on loopback for the fetch engine's tests, and a Fetcher that can reach
nothing else.

Safety: the test resolver answers only from its overrides (``*.test`` → 127.0.0.1, a few names →
127.0.0.2) and refuses every other name without asking the system, and only 127.0.0.1/32 is
allowed, so a test can never send a packet beyond loopback — not even a DNS query.
"""

from __future__ import annotations

import asyncio
import socket
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest
from aiohttp import web

from fairfetch.config import Settings
from fairfetch.net.fetch import Fetcher
from fairfetch.net.outcome import FetchResult
from fairfetch.net.perimeter import Resolver

#: Names the resolver maps to 127.0.0.2, which the perimeter refuses (only 127.0.0.1/32 allowed).
FORBIDDEN = "forbidden.example"


async def no_system_dns(host: str, port: int, **kw: Any) -> list[tuple[Any, ...]]:
    raise socket.gaierror(socket.EAI_NONAME, f"test resolver: {host!r} does not exist")


def net_settings(**overrides: Any) -> Settings:
    base: dict[str, Any] = {
        "allow_networks": ("127.0.0.1/32",),
        "resolve": ("*.test:127.0.0.1", f"{FORBIDDEN}:127.0.0.2", f"*.{FORBIDDEN}:127.0.0.2"),
        "connect_timeout": 5.0,
        "first_byte_timeout": 5.0,
        "total_timeout": 10.0,
    }
    base.update(overrides)
    return Settings(**base)


def make_fetcher(settings: Settings, **kw: Any) -> Fetcher:
    resolver = kw.pop("resolver", None) or Resolver(settings.resolve, getaddrinfo=no_system_dns)
    return Fetcher(settings, resolver=resolver, **kw)


@pytest.fixture
async def fetcher() -> AsyncIterator[Fetcher]:
    f = make_fetcher(net_settings())
    try:
        yield f
    finally:
        await f.aclose()


@dataclass
class AppServer:
    """An aiohttp app on 127.0.0.1 that counts hits per path and keeps request headers."""

    port: int = 0
    hits: Counter[str] = field(default_factory=Counter)
    requests: list[web.Request] = field(default_factory=list)

    def url(self, path: str = "/", host: str = "site.test") -> str:
        return f"http://{host}:{self.port}{path}"


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@asynccontextmanager
async def serve(routes: dict[str, Handler], host: str = "127.0.0.1") -> AsyncIterator[AppServer]:
    server = AppServer()

    @web.middleware
    async def count(request: web.Request, handler: Handler) -> web.StreamResponse:
        server.hits[request.path] += 1
        server.requests.append(request)
        return await handler(request)

    app = web.Application(middlewares=[count])
    for path, handler in routes.items():
        app.router.add_route("*", path, handler)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host, 0)
    await site.start()
    server.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield server
    finally:
        await runner.cleanup()


@dataclass
class RawServer:
    """A bare TCP listener: counts accepted connections and runs ``behaviour`` on each."""

    host: str
    port: int = 0
    accepts: int = 0
    requests: int = 0

    def url(self, path: str = "/", host: str | None = None) -> str:
        return f"http://{host or self.host}:{self.port}{path}"


Behaviour = Callable[[asyncio.StreamReader, asyncio.StreamWriter, RawServer], Awaitable[None]]


async def _read_request(reader: asyncio.StreamReader) -> bytes:
    return await reader.readuntil(b"\r\n\r\n")


@asynccontextmanager
async def raw_server(behaviour: Behaviour, host: str = "127.0.0.1") -> AsyncIterator[RawServer]:
    state = RawServer(host)
    conns: set[asyncio.Task[Any]] = set()

    async def on_conn(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        state.accepts += 1
        task = asyncio.current_task()
        if task is not None:
            conns.add(task)
        try:
            await behaviour(reader, writer, state)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    srv = await asyncio.start_server(on_conn, host, 0)
    state.port = srv.sockets[0].getsockname()[1]
    try:
        yield state
    finally:
        srv.close()
        for task in conns:
            task.cancel()
        await asyncio.gather(*conns, return_exceptions=True)
        await srv.wait_closed()


async def never_answer(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, state: RawServer
) -> None:
    await _read_request(reader)
    state.requests += 1
    await asyncio.Event().wait()  # hold the connection open, say nothing


async def answer_ok(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, state: RawServer
) -> None:
    while True:
        await _read_request(reader)
        state.requests += 1
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        await writer.drain()


def canned(head: bytes, body: bytes, *, length: bool = True) -> Behaviour:
    """A server answering every request with ``head`` (status line and headers, no blank line)
    and ``body``. With ``length`` a true Content-Length is added and the connection kept;
    without, none is added (``head`` may carry a lying one) and the connection is closed after
    the body."""

    async def behaviour(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter, state: RawServer
    ) -> None:
        while True:
            await reader.readuntil(b"\r\n\r\n")
            state.requests += 1
            extra = b"Content-Length: %d\r\n" % len(body) if length else b""
            writer.write(head + b"\r\n" + extra + b"\r\n" + body)
            await writer.drain()
            if not length:
                writer.close()
                return

    return behaviour


async def fetch_raw(
    head: bytes, body: bytes, *, length: bool = True, **settings: object
) -> FetchResult:
    """One fetch from a :func:`canned` server, with a fresh Fetcher of ``net_settings``."""
    f: Fetcher = make_fetcher(net_settings(**settings))
    try:
        async with raw_server(canned(head, body, length=length)) as srv:
            return await f.fetch(srv.url("/feed", host="enc.test"))
    finally:
        await f.aclose()
