"""The Fetcher against real aiohttp servers on 127.0.0.1: conditional GET, redirects, statuses,
body caps, gzip bombs, timeouts, connection failures."""

from __future__ import annotations

import asyncio
import gzip
import tracemalloc
import zlib

import pytest
from aiohttp import web

from fairfetch.errors import InvalidURLError
from fairfetch.net.fetch import Fetcher
from fairfetch.net.outcome import Hop

from .conftest import (
    RawServer,
    make_fetcher,
    net_settings,
    never_answer,
    raw_server,
    serve,
)

# --- basics and conditional GET ---


async def test_plain_get_sends_user_agent_and_accept_encoding(fetcher: Fetcher) -> None:
    async def feed(request: web.Request) -> web.Response:
        return web.Response(body=b"<rss/>", content_type="application/rss+xml")

    async with serve({"/feed": feed}) as srv:
        r = await fetcher.fetch(srv.url("/feed"))
    assert r.ok
    assert r.error_kind is None
    assert r.status == 200
    assert r.body == b"<rss/>"
    assert r.headers["content-type"].startswith("application/rss+xml")
    assert r.final_url == r.url == srv.url("/feed")
    assert r.address == "127.0.0.1"
    assert r.started_at is not None
    assert r.duration >= 0
    sent = srv.requests[0].headers
    assert sent["User-Agent"] == fetcher.settings.user_agent
    assert "fairfetch" in sent["User-Agent"]
    assert sent["Accept-Encoding"] == "gzip, deflate"


async def test_conditional_get_304(fetcher: Fetcher) -> None:
    async def feed(request: web.Request) -> web.Response:
        if request.headers.get("If-None-Match") == '"v1"' or (
            request.headers.get("If-Modified-Since") == "Sun, 06 Nov 1994 08:49:37 GMT"
        ):
            return web.Response(status=304)
        return web.Response(
            body=b"<feed/>",
            headers={"ETag": '"v1"', "Last-Modified": "Sun, 06 Nov 1994 08:49:37 GMT"},
        )

    async with serve({"/feed": feed}) as srv:
        first = await fetcher.fetch(srv.url("/feed"))
        assert first.status == 200
        assert first.body == b"<feed/>"
        assert "If-None-Match" not in srv.requests[0].headers
        by_etag = await fetcher.fetch(srv.url("/feed"), etag=first.headers["etag"])
        by_date = await fetcher.fetch(
            srv.url("/feed"), last_modified=first.headers["last-modified"]
        )
    assert srv.requests[1].headers["If-None-Match"] == '"v1"'
    assert srv.requests[2].headers["If-Modified-Since"] == "Sun, 06 Nov 1994 08:49:37 GMT"
    for r in (by_etag, by_date):
        assert r.status == 304
        assert r.not_modified
        assert not r.ok
        assert r.error_kind is None
        assert r.body == b""


async def test_caller_headers_override_defaults(fetcher: Fetcher) -> None:
    async def echo(request: web.Request) -> web.Response:
        return web.Response(text=request.headers["User-Agent"])

    async with serve({"/": echo}) as srv:
        r = await fetcher.fetch(srv.url("/"), headers={"user-agent": "probe/1"})
    assert r.body == b"probe/1"


async def test_invalid_initial_url_raises() -> None:
    f = make_fetcher(net_settings())
    try:
        with pytest.raises(InvalidURLError):
            await f.fetch("ftp://site.test/x")
        with pytest.raises(InvalidURLError):
            await f.fetch("not a url")
    finally:
        await f.aclose()


# --- redirects ---


def redirector(status: int, location: str) -> web.RequestHandler:  # type: ignore[type-arg]
    async def handler(request: web.Request) -> web.Response:
        return web.Response(status=status, headers={"Location": location})

    return handler


async def ok(request: web.Request) -> web.Response:
    return web.Response(text=f"{request.method} {request.path} {await request.text()}")


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
async def test_single_redirect_is_followed_and_recorded(fetcher: Fetcher, status: int) -> None:
    async with serve({"/old": redirector(status, "/new"), "/new": ok}) as srv:
        r = await fetcher.fetch(srv.url("/old"))
    assert r.ok
    assert r.final_url == srv.url("/new")
    assert r.url == srv.url("/old")
    assert r.hops == (Hop(srv.url("/old"), status, srv.url("/new")),)


async def test_redirect_chain_across_hosts(fetcher: Fetcher) -> None:
    port_holder: dict[str, int] = {}

    async def to_other(request: web.Request) -> web.Response:
        return web.Response(
            status=307, headers={"Location": f"http://other.test:{port_holder['p']}/d"}
        )

    async with serve(
        {"/a": redirector(302, "/b"), "/b": redirector(301, "c"), "/c": to_other, "/d": ok}
    ) as srv:
        port_holder["p"] = srv.port
        r = await fetcher.fetch(srv.url("/a"))
    assert r.ok
    assert r.hops == (
        Hop(srv.url("/a"), 302, srv.url("/b")),
        Hop(srv.url("/b"), 301, srv.url("/c")),
        Hop(srv.url("/c"), 307, srv.url("/d", host="other.test")),
    )
    assert r.final_url == srv.url("/d", host="other.test")
    assert r.body == b"GET /d "


async def test_redirect_loop_is_a_redirect_failure(fetcher: Fetcher) -> None:
    async with serve({"/a": redirector(302, "/b"), "/b": redirector(302, "/a")}) as srv:
        r = await fetcher.fetch(srv.url("/a"))
    assert r.error_kind == "redirect"
    assert "loop" in r.error_detail
    assert [h.url for h in r.hops] == [srv.url("/a"), srv.url("/b")]
    assert srv.hits == {"/a": 1, "/b": 1}  # stopped at the loop, no extra requests


async def test_self_redirect_loop(fetcher: Fetcher) -> None:
    async with serve({"/a": redirector(301, "/a")}) as srv:
        r = await fetcher.fetch(srv.url("/a"))
    assert r.error_kind == "redirect"
    assert srv.hits["/a"] == 1


async def test_too_many_redirects() -> None:
    f = make_fetcher(net_settings(max_redirects=3))

    async def step(request: web.Request) -> web.Response:
        n = int(request.match_info["n"])
        return web.Response(status=302, headers={"Location": f"/r/{n + 1}"})

    try:
        async with serve({"/r/{n}": step}) as srv:
            r = await f.fetch(srv.url("/r/0"))
    finally:
        await f.aclose()
    assert r.error_kind == "redirect"
    assert "more than 3" in r.error_detail
    assert len(r.hops) == 4
    assert sum(srv.hits.values()) == 4  # the fourth Location is not requested


async def test_max_redirects_chain_is_allowed() -> None:
    f = make_fetcher(net_settings(max_redirects=3))

    async def step(request: web.Request) -> web.Response:
        n = int(request.match_info["n"])
        if n == 3:
            return web.Response(text="done")
        return web.Response(status=302, headers={"Location": f"/r/{n + 1}"})

    try:
        async with serve({"/r/{n}": step}) as srv:
            r = await f.fetch(srv.url("/r/0"))
    finally:
        await f.aclose()
    assert r.ok
    assert len(r.hops) == 3


@pytest.mark.parametrize(
    ("location", "detail"),
    [
        (None, "without a Location"),
        ("ftp://site.test/x", "bad Location"),
        ("http://[::1/x", "bad Location"),
    ],
)
async def test_bad_location(fetcher: Fetcher, location: str | None, detail: str) -> None:
    async def bad(request: web.Request) -> web.Response:
        headers = {"Location": location} if location is not None else {}
        return web.Response(status=301, headers=headers)

    async with serve({"/a": bad}) as srv:
        r = await fetcher.fetch(srv.url("/a"))
    assert r.error_kind == "redirect"
    assert detail in r.error_detail


async def test_not_following_redirects(fetcher: Fetcher) -> None:
    async with serve({"/a": redirector(301, "/b"), "/b": ok}) as srv:
        r = await fetcher.fetch(srv.url("/a"), follow_redirects=False)
    assert r.status == 301
    assert r.error_kind is None
    assert r.headers["location"] == "/b"
    assert r.hops == ()
    assert srv.hits["/b"] == 0


@pytest.mark.parametrize(
    ("status", "method", "body"),
    [
        (307, "POST", "hub.mode=subscribe"),
        (308, "POST", "hub.mode=subscribe"),
        (301, "GET", ""),
        (302, "GET", ""),
        (303, "GET", ""),
    ],
)
async def test_post_through_redirects(
    fetcher: Fetcher, status: int, method: str, body: str
) -> None:
    async with serve({"/hub": redirector(status, "/hub2"), "/hub2": ok}) as srv:
        r = await fetcher.fetch(srv.url("/hub"), method="POST", data={"hub.mode": "subscribe"})
    assert r.ok
    assert r.body.decode() == f"{method} /hub2 {body}"


async def test_credentials_are_not_sent_to_another_origin(fetcher: Fetcher) -> None:
    seen: dict[str, str | None] = {}

    async def target(request: web.Request) -> web.Response:
        seen[request.host.split(":")[0]] = request.headers.get("Authorization")
        return web.Response(text="ok")

    port: dict[str, int] = {}

    async def away(request: web.Request) -> web.Response:
        return web.Response(status=302, headers={"Location": f"http://b.test:{port['p']}/t"})

    async with serve({"/same": redirector(302, "/t"), "/away": away, "/t": target}) as srv:
        port["p"] = srv.port
        await fetcher.fetch(srv.url("/same", "a.test"), headers={"Authorization": "Bearer x"})
        await fetcher.fetch(srv.url("/away", "a.test"), headers={"Authorization": "Bearer x"})
    assert seen == {"a.test": "Bearer x", "b.test": None}


# --- statuses ---


def respond(status: int, headers: dict[str, str] | None = None, body: bytes = b"") -> object:
    async def handler(request: web.Request) -> web.Response:
        return web.Response(status=status, headers=headers or {}, body=body)

    return handler


async def test_status_mapping(fetcher: Fetcher) -> None:
    routes = {
        "/gone": respond(410),
        "/challenge": respond(403, {"cf-mitigated": "challenge"}),
        "/challenge-body": respond(
            403, body=b"<html><script src='/cdn-cgi/challenge-platform/h/b'></script>"
        ),
        "/forbidden": respond(403),
        "/missing": respond(404),
        "/broken": respond(500),
        "/unavailable": respond(503),
        "/throttled": respond(429, {"Retry-After": "120"}),
        "/throttled-bare": respond(429),
        "/maintenance": respond(503, {"Retry-After": "Sun, 06 Nov 1994 08:49:37 GMT"}),
        "/nocontent": respond(204),
    }
    async with serve(routes) as srv:  # type: ignore[arg-type]
        got = {path: await fetcher.fetch(srv.url(path)) for path in routes}
    assert got["/gone"].error_kind == "gone"
    assert got["/challenge"].error_kind == "blocked"
    assert got["/challenge-body"].error_kind == "blocked"
    assert (got["/forbidden"].error_kind, got["/forbidden"].error_detail) == (
        "http",
        "403 Forbidden",
    )
    assert got["/missing"].error_kind == "http"
    assert got["/missing"].error_detail.startswith("404")
    assert got["/broken"].error_detail.startswith("500")
    assert got["/unavailable"].error_kind == "http"
    assert not got["/unavailable"].throttled
    # throttles are not errors
    for path, seconds in (
        ("/throttled", 120.0),
        ("/throttled-bare", 1800.0),
        ("/maintenance", 60.0),
    ):
        r = got[path]
        assert r.error_kind is None, path
        assert r.throttled, path
        assert r.retry_after == seconds, path
        assert not r.ok
    assert got["/nocontent"].ok
    assert got["/nocontent"].body == b""


async def test_head_and_probe_without_body(fetcher: Fetcher) -> None:
    async with serve({"/big": respond(200, body=b"x" * 100_000)}) as srv:
        head = await fetcher.fetch(srv.url("/big"), method="HEAD")
        probe = await fetcher.fetch(srv.url("/big"), read_body=False)
    assert head.ok
    assert head.body == b""
    assert probe.ok
    assert probe.body == b""
    assert probe.bytes_read == 0


# --- body caps and decompression ---


async def test_body_cap_identity_with_content_length(fetcher: Fetcher) -> None:
    async with serve({"/big": respond(200, body=b"x" * 50_000)}) as srv:
        r = await fetcher.fetch(srv.url("/big"), max_bytes=10_000)
        fits = await fetcher.fetch(srv.url("/big"), max_bytes=50_000)
    assert r.error_kind == "too_large"
    assert fits.ok
    assert len(fits.body) == 50_000


async def test_body_cap_streamed_without_content_length(fetcher: Fetcher) -> None:
    async def stream(request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse()
        await resp.prepare(request)
        for _ in range(100):
            await resp.write(b"y" * 10_000)
        await resp.write_eof()
        return resp

    async with serve({"/stream": stream}) as srv:
        r = await fetcher.fetch(srv.url("/stream"), max_bytes=25_000)
    assert r.error_kind == "too_large"
    assert r.body == b"y" * 25_000  # the prefix up to the cap, for whoever wants it
    assert r.bytes_read == 25_001


def _gzip_stream(total: int, chunk: int = 1 << 20) -> bytes:
    comp = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    zeros = b"\0" * chunk
    parts = [comp.compress(zeros) for _ in range(total // chunk)]
    parts.append(comp.flush())
    return b"".join(parts)


@pytest.fixture(scope="module")
def bombs() -> dict[str, bytes]:
    return {
        # one gzip member: 64 MiB of zeros in ~64 KiB
        "single": _gzip_stream(64 << 20),
        # 1 GiB as 1024 concatenated members of 1 MiB (~1 MiB on the wire)
        "members": gzip.compress(b"\0" * (1 << 20)) * 1024,
    }


@pytest.mark.parametrize("kind", ["single", "members"])
async def test_gzip_bomb_is_cut_off_with_memory_bounded(
    fetcher: Fetcher, bombs: dict[str, bytes], kind: str
) -> None:
    bomb = bombs[kind]

    async def serve_bomb(request: web.Request) -> web.Response:
        return web.Response(body=bomb, headers={"Content-Encoding": "gzip"})

    cap = 1 << 20
    async with serve({"/bomb": serve_bomb}) as srv:
        await fetcher.fetch(srv.url("/warm"))  # session and connector exist before measuring
        tracemalloc.start()
        try:
            r = await fetcher.fetch(srv.url("/bomb"), max_bytes=cap)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert r.error_kind == "too_large"
    assert len(r.body) == cap
    assert r.bytes_read == cap + 1
    if kind == "members":
        assert r.wire_bytes < len(bomb) // 10  # stopped reading early
    # The bomb inflates to 64 MiB or 1 GiB; we held a few times the 1 MiB cap at most.
    assert peak < 8 * cap, f"peak {peak} bytes"


async def test_gzip_and_deflate_bodies_are_decoded(fetcher: Fetcher) -> None:
    text = b"<rss>" + b"hello feed " * 5000 + b"</rss>"
    raw_deflate = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    routes = {
        "/gzip": respond(200, {"Content-Encoding": "gzip"}, gzip.compress(text)),
        "/xgzip": respond(200, {"Content-Encoding": "x-gzip"}, gzip.compress(text)),
        "/deflate": respond(200, {"Content-Encoding": "deflate"}, zlib.compress(text)),
        "/raw-deflate": respond(
            200, {"Content-Encoding": "deflate"}, raw_deflate.compress(text) + raw_deflate.flush()
        ),
        "/members": respond(
            200,
            {"Content-Encoding": "gzip"},
            gzip.compress(text[:1000]) + gzip.compress(text[1000:]),
        ),
        "/corrupt": respond(200, {"Content-Encoding": "gzip"}, b"\x1f\x8b\x08\x00garbage" * 10),
    }
    async with serve(routes) as srv:  # type: ignore[arg-type]
        got = {p: await fetcher.fetch(srv.url(p)) for p in routes}
    for path in ("/gzip", "/xgzip", "/deflate", "/raw-deflate", "/members"):
        assert got[path].ok, path
        assert got[path].body == text, path
        assert got[path].bytes_read == len(text)
        assert got[path].wire_bytes < len(text)
    assert got["/corrupt"].error_kind == "http"
    assert "undecodable" in got["/corrupt"].error_detail


# --- time caps and connection failures ---


async def test_server_that_never_answers_times_out() -> None:
    f = make_fetcher(net_settings(first_byte_timeout=0.3, total_timeout=30.0))
    try:
        async with raw_server(never_answer) as srv:
            r = await f.fetch(srv.url("/", host="quiet.test"))
    finally:
        await f.aclose()
    assert r.error_kind == "timeout"
    assert r.status is None
    assert srv.requests == 1


async def test_connect_timeout_when_the_listener_backlog_is_full() -> None:
    # A listener that never accepts, its backlog filled: the kernel drops further SYNs, so
    # the connection attempt hangs until the connect cap.
    import socket

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    fillers = []
    for _ in range(8):
        c = socket.socket()
        c.setblocking(False)
        try:
            c.connect(("127.0.0.1", port))
        except BlockingIOError:
            pass
        fillers.append(c)
    f = make_fetcher(net_settings(connect_timeout=0.3, first_byte_timeout=30.0))
    try:
        r = await f.fetch(f"http://full.test:{port}/")
    finally:
        await f.aclose()
        for c in fillers:
            c.close()
        listener.close()
    assert r.error_kind == "timeout"
    assert "Connection timeout" in r.error_detail


async def drip(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, state: RawServer
) -> None:
    await reader.readuntil(b"\r\n\r\n")
    state.requests += 1
    writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n")
    while True:  # one byte at a time, forever: never idle long, never done
        writer.write(b"x")
        await writer.drain()
        await asyncio.sleep(0.01)


async def test_slow_drip_hits_the_total_time_cap() -> None:
    f = make_fetcher(net_settings(first_byte_timeout=5.0, total_timeout=0.5))
    try:
        async with raw_server(drip) as srv:
            r = await f.fetch(srv.url("/", host="slow.test"))
    finally:
        await f.aclose()
    assert r.error_kind == "timeout"
    assert "total" in r.error_detail


async def test_connection_refused_is_connect() -> None:
    async with raw_server(never_answer) as srv:
        port = srv.port
    # the listener is closed now: nothing listens on that port
    f = make_fetcher(net_settings())
    try:
        r = await f.fetch(f"http://closed.test:{port}/")
    finally:
        await f.aclose()
    assert r.error_kind == "connect"


async def test_unknown_name_is_dns(fetcher: Fetcher) -> None:
    r = await fetcher.fetch("http://nowhere.example/feed")
    assert r.error_kind == "dns"
    assert r.address is None


async def hang_up(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, state: RawServer
) -> None:
    await reader.readuntil(b"\r\n\r\n")
    state.requests += 1
    writer.transport.abort()  # close without a response


async def test_no_hidden_retries() -> None:
    f = make_fetcher(net_settings())
    try:
        async with raw_server(hang_up) as srv:
            r = await f.fetch(srv.url("/", host="flaky.test"))
    finally:
        await f.aclose()
    assert r.error_kind == "connect"
    assert srv.requests == 1  # aiohttp would silently have sent it twice


async def test_keep_alive_reuses_one_connection() -> None:
    from .conftest import answer_ok

    f = make_fetcher(net_settings())
    try:
        async with raw_server(answer_ok) as srv:
            for _ in range(5):
                r = await f.fetch(srv.url("/", host="pooled.test"))
                assert r.ok
    finally:
        await f.aclose()
    assert srv.requests == 5
    assert srv.accepts == 1


async def test_aclose_is_idempotent_and_context_manager() -> None:
    async with serve({"/": ok}) as srv:
        async with make_fetcher(net_settings()) as f:
            assert (await f.fetch(srv.url("/"))).ok
        await f.aclose()
        # a closed Fetcher opens a new session on next use
        assert (await f.fetch(srv.url("/"))).ok
        await f.aclose()


def _self_signed(tmp_path: object) -> tuple[str, str]:
    crypto = pytest.importorskip("cryptography")
    del crypto
    import datetime as dt
    from pathlib import Path

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "secure.test")])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("secure.test")]), False)
        .sign(key, hashes.SHA256())
    )
    base = Path(str(tmp_path))
    cert_path, key_path = base / "cert.pem", base / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return str(cert_path), str(key_path)


async def test_untrusted_certificate_is_tls(tmp_path: object, fetcher: Fetcher) -> None:
    import ssl

    cert, key = _self_signed(tmp_path)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    app = web.Application()
    app.router.add_get("/", ok)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=context)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        r = await fetcher.fetch(f"https://secure.test:{port}/")
    finally:
        await runner.cleanup()
    assert r.error_kind == "tls"
    assert "certificate" in r.error_detail.lower()


async def test_tls_handshake_against_plain_http_is_tls(fetcher: Fetcher) -> None:
    async with serve({"/": ok}) as srv:
        r = await fetcher.fetch(f"https://plain.test:{srv.port}/")
    assert r.error_kind == "tls"


async def test_long_response_header_is_accepted(fetcher: Fetcher) -> None:
    csp = "default-src 'self' " + " ".join(f"https://cdn{i}.example" for i in range(1500))
    assert len(csp) > 20_000
    async with serve({"/": respond(200, {"Content-Security-Policy": csp}, b"ok")}) as srv:  # type: ignore[dict-item]
        r = await fetcher.fetch(srv.url("/"))
    assert r.ok
    assert r.headers["content-security-policy"] == csp


async def cut_short(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, state: RawServer
) -> None:
    await reader.readuntil(b"\r\n\r\n")
    state.requests += 1
    writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 5000\r\n\r\n<rss>only the start")
    await writer.drain()
    writer.transport.abort()  # the declared body never comes


async def test_a_body_shorter_than_declared_is_a_failure_not_a_feed() -> None:
    f = make_fetcher(net_settings())
    try:
        async with raw_server(cut_short) as srv:
            r = await f.fetch(srv.url("/feed", host="short.test"))
    finally:
        await f.aclose()
    assert not r.ok
    assert r.error_kind == "connect"
    assert r.body == b""
