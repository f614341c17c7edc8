"""One fetch: perimeter, conditional headers, redirect chain, size and time caps, outcome.

A fetch never raises for network or HTTP failures: they come back as ``FetchResult.error_kind``
(see outcome.py), because to a crawler a failed fetch is data about a feed, not an exception.
Only an unusable *initial* URL (not http(s), no host) raises :class:`InvalidURLError`: that is a
caller's bug or bad input, which should have been refused when the feed was added.

How the guarantees are kept:

* **Perimeter** — the session's connector has one resolver, :class:`CheckingResolver`, which
  resolves once, checks, and returns only allowed addresses; the connector connects to exactly
  those (no second lookup). IP-literal hosts, which aiohttp does not resolve, are checked here
  before the request. Redirects are followed by hand, so every hop passes both checks.
* **Body cap** — decompression is ours (``auto_decompress=False``) and bounded with zlib's
  ``max_length``: we never inflate more than the bytes still allowed plus one, so a gzip bomb
  costs at most the cap in memory, whatever its ratio. Stacked codings ("gzip, gzip") are
  undone in turn, each layer bounded; a coding we did not ask for, or a compressed stream that
  ends before its end, fails as ``http`` rather than passing on bytes that are not the body.
* **Time caps** — connect (``sock_connect``), first byte and every later read
  (``sock_read``), and the whole fetch including redirects (``asyncio.timeout``).
* **No hidden retries** — aiohttp's silent one-time retry on a dropped keep-alive connection is
  switched off: one call sends exactly the requests it reports (plus robots.txt when asked).
"""

from __future__ import annotations

import asyncio
import re
import socket
import ssl
import time
import zlib
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from types import TracebackType
from typing import TYPE_CHECKING, Any

import aiohttp
from aiohttp.http_exceptions import (
    ContentLengthError,
    HttpProcessingError,
    TransferEncodingError,
)
from yarl import URL

from fairfetch.errors import InvalidURLError
from fairfetch.net.ip_literals import ip_literal, never_ip_literal
from fairfetch.net.outcome import FetchResult, Hop
from fairfetch.net.perimeter import (
    CheckingResolver,
    PerimeterRefused,
    Resolver,
    check_address,
    parse_allow_networks,
)
from fairfetch.net.retry_after import parse_retry_after, retry_after_seconds

if TYPE_CHECKING:
    from fairfetch.config import Settings
    from fairfetch.net.robots import RobotsCache

__all__ = ["ACCEPT_ENCODING", "Fetcher", "is_bot_challenge"]

#: We decode these ourselves, bounded. Brotli/zstd are not advertised: no bounded decoder here.
ACCEPT_ENCODING = "gzip, deflate"

_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_CHUNK = 64 * 1024
_SMALL_REDIRECT_BODY = 16 * 1024
_CROSS_ORIGIN_DROP = ("authorization", "proxy-authorization", "cookie")


def is_bot_challenge(status: int, headers: Mapping[str, str], body: bytes = b"") -> bool:
    """A 403/503 that is a bot wall (a challenge page), not the publisher saying no.

    Recorded as ``blocked``: retrying harder will not help, and it says nothing about the feed.
    Headers are lower-cased keys.
    """
    if status not in (403, 503):
        return False
    if "challenge" in headers.get("cf-mitigated", "").lower():
        return True
    if headers.get("x-amzn-waf-action", "").lower() in {"challenge", "captcha"}:
        return True
    if "x-datadome" in headers or "x-dd-b" in headers:
        return True
    if "x-sucuri-block" in headers:
        return True
    server = headers.get("server", "").lower()
    if "ddos-guard" in server:
        return True
    head = body[:4096]
    return b"/cdn-cgi/challenge-platform/" in head or b"_cf_chl_opt" in head


class _TooLarge(Exception):
    pass


class _BadEncoding(Exception):
    pass


class _Decoder:
    """Bounded gzip/deflate decoder: ``feed(data, limit)`` returns at most ``limit`` bytes.

    Asking for ``remaining + 1`` bytes is enough to know the cap is passed, so whatever is
    left compressed is never inflated. Concatenated gzip members are followed; trailing junk
    after the last member is ignored, as browsers do.
    """

    def __init__(self, coding: str) -> None:
        self.coding = coding
        self._d: Any = None
        self._head = b""
        self._fed = False
        if coding in ("gzip", "x-gzip"):
            self._d = zlib.decompressobj(16 + zlib.MAX_WBITS)

    def finish(self) -> None:
        """Raise unless the stream ended where it says it ends: a body cut short still inflates
        to a plausible prefix (half a feed), which must not pass for the whole of it."""
        if not self._fed:
            return  # an empty body: nothing was compressed
        if self._d is None or not self._d.eof:
            raise _BadEncoding(f"truncated {self.coding} body: the stream ends before its end")

    def feed(self, data: bytes, limit: int) -> bytes:
        self._fed = self._fed or bool(data)
        if self._d is None:  # deflate: zlib-wrapped per the RFC, raw in practice too; sniff
            self._head += data
            if len(self._head) < 2:
                return b""
            b0, b1 = self._head[0], self._head[1]
            wrapped = (b0 & 0x0F) == 8 and ((b0 << 8) | b1) % 31 == 0
            self._d = zlib.decompressobj(zlib.MAX_WBITS if wrapped else -zlib.MAX_WBITS)
            data, self._head = self._head, b""
        out = bytearray()
        try:
            while len(out) < limit:
                out += self._d.decompress(data, limit - len(out))
                data = b""
                if self._d.unconsumed_tail:
                    if len(out) < limit:
                        data = self._d.unconsumed_tail
                        continue
                    break
                if self._d.eof and self._d.unused_data.startswith(b"\x1f\x8b"):
                    data = self._d.unused_data
                    self._d = zlib.decompressobj(16 + zlib.MAX_WBITS)
                    continue
                break
        except zlib.error as exc:
            raise _BadEncoding(f"undecodable {self.coding} body: {exc}") from None
        return bytes(out)


#: Content codings we decode (bounded); "identity" is no coding at all.
_DECODABLE = frozenset({"gzip", "x-gzip", "deflate"})


class _InnerTooLarge(Exception):
    pass


class _Chain:
    """The decoders of a ``Content-Encoding`` list, undone last-applied first (RFC 9110 §8.4:
    "gzip, gzip" is gzip twice). Each inner layer is bounded too: a gzip of a gzip bomb would
    otherwise inflate its outer layer without limit before the cap ever saw a byte. An inner
    layer may hold twice the cap (compressed data barely compresses again)."""

    def __init__(self, codings: list[str], cap: int) -> None:
        self._layers = [_Decoder(c) for c in reversed(codings)]
        self._inner_cap = 2 * cap + 1024
        self._spent = [0] * len(self._layers)

    def feed(self, data: bytes, limit: int) -> bytes:
        """Up to ``limit`` bytes of the innermost layer; raises :class:`_InnerTooLarge` with
        what that layer gave when an inner layer passed its own bound first."""
        last = len(self._layers) - 1
        over = False
        for i, layer in enumerate(self._layers[:last]):
            room = self._inner_cap - self._spent[i]
            data = layer.feed(data, room + 1)
            if len(data) > room:
                over, data = True, data[:room]
            self._spent[i] += len(data)
        out = self._layers[last].feed(data, limit)
        if over and len(out) < limit:
            raise _InnerTooLarge(out)
        return out

    def finish(self) -> None:
        for layer in self._layers:
            layer.finish()


def _content_codings(value: str) -> list[str]:
    return [c for c in (p.strip().lower() for p in value.split(",")) if c and c != "identity"]


@dataclass
class _Progress:
    url: str
    started_at: datetime
    t0: float
    final_url: str = ""
    hops: list[Hop] = field(default_factory=list)
    address: str | None = None
    status: int | None = None
    headers: dict[str, str] = field(default_factory=dict)

    def result(self, **kw: Any) -> FetchResult:
        return FetchResult(
            url=self.url,
            final_url=self.final_url or self.url,
            status=kw.pop("status", self.status),
            headers=kw.pop("headers", self.headers),
            hops=tuple(self.hops),
            duration=time.perf_counter() - self.t0,
            started_at=self.started_at,
            address=self.address,
            **kw,
        )

    def fail(self, kind: str, detail: str, **kw: Any) -> FetchResult:
        return self.result(error_kind=kind, error_detail=_one_line(detail), **kw)


#: A detail is stored in ``feeds.last_error`` and in a ``crawls`` row per attempt, and shown on
#: one line by the CLI and the web: what a server sent (a 60 KB status line, reason phrase or
#: Location, aiohttp's multi-line caret diagrams) must not reach it whole.
_MAX_DETAIL = 300


def _one_line(detail: str) -> str:
    flat = " ".join(_latin1(detail).split())
    return flat if len(flat) <= _MAX_DETAIL else flat[: _MAX_DETAIL - 1] + "…"


#: Request headers that make a GET conditional (RFC 9110 §13.1).
_CONDITIONS = frozenset({"if-none-match", "if-modified-since"})

#: What aiohttp refuses to send in a header value (a ValueError, "header injection"), though it
#: reads such values from a server without complaint.
_UNSENDABLE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


def _sendable(validator: str) -> bool:
    """Whether a stored ETag / Last-Modified can go back as received. One holding a control
    character cannot be sent (aiohttp raises), so it can match nothing: it is left out and the
    GET is unconditional, instead of every later fetch of the feed raising."""
    return _UNSENDABLE.search(validator) is None


def _exception_kind(exc: BaseException) -> tuple[str, str]:
    """Map an aiohttp/OS exception to (error_kind, detail)."""
    detail = f"{type(exc).__name__}: {exc}".strip()
    if isinstance(exc, aiohttp.ClientConnectorDNSError):
        cause = exc.os_error
        if isinstance(cause, PerimeterRefused):
            return "perimeter", str(cause)
        return "dns", str(cause) or detail
    if isinstance(
        exc,
        aiohttp.ClientConnectorCertificateError | aiohttp.ClientSSLError | ssl.SSLError,
    ):
        return "tls", detail
    if isinstance(exc, TimeoutError):
        return "timeout", detail
    if isinstance(exc, aiohttp.ClientResponseError):
        return "http", f"malformed response: {exc.message}"
    payload_cause = exc.__cause__
    if (
        isinstance(exc, aiohttp.ClientPayloadError)
        and isinstance(payload_cause, HttpProcessingError)
        and not isinstance(payload_cause, ContentLengthError | TransferEncodingError)
    ):
        # The body broke the framing (endless trailers, a bad chunk): the server's malformed
        # response. Only "not enough data" — the peer gone mid-body — is the network's.
        return "http", f"malformed response: {payload_cause.message}"
    if isinstance(exc, socket.gaierror):
        return "dns", detail
    if isinstance(exc, aiohttp.InvalidURL):
        return "redirect", detail
    return "connect", detail


def _literal_refusal(host: str, allow: Any) -> str | None:
    """Perimeter check for hosts aiohttp will not resolve (IP literals, numeric IPv4 forms)."""
    if never_ip_literal(host):
        return None
    bare = host[1:-1] if host.startswith("[") else host
    addr = ip_literal(bare.split("%", 1)[0])
    if addr is None:
        try:  # 2130706433, 127.1, 0x7f.1: legacy numeric forms the OS would accept
            socket.inet_aton(bare)
        except OSError:
            return None
        return f"{host} is a non-canonical IPv4 literal"
    return check_address(addr, allow)


_ESCAPED_BYTE = re.compile("[\udc80-\udcff]")


def _undropped(location: str) -> str:
    """A header's bytes that are not UTF-8 reach us as surrogate escapes, which yarl silently
    drops ("/caf\\xe9" became "/caf": another URL, recorded as the hop and, if permanent, the
    feed's new address). Percent-encode them, as browsers do."""
    return _ESCAPED_BYTE.sub(lambda m: f"%{ord(m.group()) - 0xDC00:02X}", location)


def _latin1(text: str) -> str:
    """Header bytes that are not UTF-8, kept by aiohttp as lone surrogates (which no database
    driver stores: the crawler keeps ETag and Last-Modified, last_error keeps a reason
    phrase), read as Latin-1 instead, as RFC 9110 §5.5 says such bytes historically were."""
    if text.isascii():  # nearly every header: no escape to look for (8 calls a response)
        return text
    return _ESCAPED_BYTE.sub(lambda m: chr(ord(m.group()) - 0xDC00), text)


def _origin(url: URL) -> tuple[str | None, str | None, int | None]:
    return url.scheme, url.raw_host, url.port


class Fetcher:
    """The one HTTP client of fairfetch (see the module docstring for its guarantees).

    One aiohttp session and connector for the Fetcher's lifetime (created on first use inside
    the running loop); close it with :meth:`aclose` or ``async with``.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        resolver: Resolver | None = None,
        robots: RobotsCache | None = None,
    ) -> None:
        self.settings = settings
        self._allow = parse_allow_networks(settings.allow_networks)
        self.resolver = resolver if resolver is not None else Resolver.from_settings(settings)
        self._checking = CheckingResolver(self.resolver, self._allow)
        if robots is None:
            from fairfetch.net.robots import RobotsCache

            robots = RobotsCache()
        if robots.fetcher is None:
            robots.bind(self)
        self.robots = robots
        self._session: aiohttp.ClientSession | None = None
        self._base_headers = {
            "User-Agent": settings.user_agent,
            "Accept-Encoding": ACCEPT_ENCODING,
        }
        self._timeout = aiohttp.ClientTimeout(
            total=None,
            sock_connect=settings.connect_timeout,
            sock_read=settings.first_byte_timeout,
        )

    # -- lifecycle --

    def _get_session(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            connector = aiohttp.TCPConnector(
                resolver=self._checking,
                limit=max(100, 2 * self.settings.global_in_flight),
                limit_per_host=0,
                ttl_dns_cache=300,
                # Below common server keep-alive timeouts (Apache: 5 s), so a pooled connection
                # is rarely one the server already dropped (we do not retry those).
                keepalive_timeout=4.0,
            )
            self._session = aiohttp.ClientSession(
                connector=connector,
                cookie_jar=aiohttp.DummyCookieJar(),
                auto_decompress=False,
                timeout=self._timeout,
                trust_env=False,
                raise_for_status=False,
                # Real sites send long Content-Security-Policy and Set-Cookie lines; aiohttp's
                # 8 KiB default would turn those pages into "malformed response" failures.
                max_line_size=64 * 1024,
                max_field_size=64 * 1024,
            )
            if hasattr(self._session, "_retry_connection"):
                self._session._retry_connection = False
        return self._session

    async def aclose(self) -> None:
        if self.robots.fetcher is self:
            self.robots.cancel_pending()  # they would open a new session on a closed fetcher
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def __aenter__(self) -> Fetcher:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    # -- the fetch --

    async def fetch(
        self,
        url: str,
        *,
        method: str = "GET",
        etag: str | None = None,
        last_modified: str | None = None,
        headers: Mapping[str, str] | None = None,
        data: bytes | Mapping[str, str] | None = None,
        max_bytes: int | None = None,
        read_body: bool = True,
        follow_redirects: bool = True,
        check_robots: bool = False,
    ) -> FetchResult:
        """Fetch ``url``; never raises for network/HTTP failures (see ``error_kind``)."""
        target = self._initial_url(url)
        progress = _Progress(url=url, started_at=datetime.now(UTC), t0=time.perf_counter())
        total = self.settings.total_timeout
        try:
            async with asyncio.timeout(total):
                return await self._fetch(
                    progress,
                    target,
                    method=method.upper(),
                    headers=self._request_headers(etag, last_modified, headers),
                    data=data,
                    cap=self.settings.max_body_bytes if max_bytes is None else max_bytes,
                    read_body=read_body,
                    follow_redirects=follow_redirects,
                    check_robots=check_robots and self.settings.obey_robots,
                )
        except TimeoutError:
            return progress.fail("timeout", f"total time over {total:g} s")

    def _initial_url(self, url: str) -> URL:
        try:
            target = URL(url)
        except (ValueError, TypeError) as exc:
            raise InvalidURLError(url, f"not a URL ({exc})") from None
        if target.scheme not in ("http", "https") or not target.raw_host:
            raise InvalidURLError(url, "only http(s) URLs with a host can be fetched")
        return target.with_fragment(None)

    def _request_headers(
        self, etag: str | None, last_modified: str | None, extra: Mapping[str, str] | None
    ) -> dict[str, str]:
        out = dict(self._base_headers)
        if etag and _sendable(etag):
            out["If-None-Match"] = etag
        if last_modified and _sendable(last_modified):
            out["If-Modified-Since"] = last_modified
        if extra:
            lowered = {k.lower(): k for k in out}
            for k, v in extra.items():
                out.pop(lowered.get(k.lower(), k), None)
                out[k] = v
        return out

    async def _fetch(
        self,
        progress: _Progress,
        current: URL,
        *,
        method: str,
        headers: dict[str, str],
        data: bytes | Mapping[str, str] | None,
        cap: int,
        read_body: bool,
        follow_redirects: bool,
        check_robots: bool,
    ) -> FetchResult:
        session = self._get_session()
        visited: set[tuple[str, str]] = set()
        unconditioned = False
        while True:
            progress.final_url = str(current)
            progress.status, progress.headers, progress.address = None, {}, None
            host = current.raw_host or ""
            refusal = _literal_refusal(host, self._allow)
            if refusal:
                return progress.fail("perimeter", refusal)
            if check_robots:
                verdict = await self.robots.check(str(current))
                if verdict.kind == "throttled" and verdict.retry_after is not None:
                    # robots.txt was throttled: so is this request (not an error of the URL).
                    return progress.result(
                        status=429,
                        headers={"retry-after": str(round(verdict.retry_after))},
                        retry_after=verdict.retry_after,
                        error_detail=verdict.detail,
                    )
                if not verdict.allowed:
                    return progress.fail(verdict.kind or "robots", verdict.detail)
            try:
                resp = await session.request(
                    method,
                    current,
                    headers=headers,
                    data=data,
                    allow_redirects=False,
                    timeout=self._timeout,
                )
            except (aiohttp.ClientError, OSError, TimeoutError) as exc:
                if (
                    isinstance(exc, aiohttp.ClientResponseError)
                    and not unconditioned
                    and any(k.lower() in _CONDITIONS for k in headers)
                ):
                    # Most often a 304 sent with a body (its bytes read as the next answer's
                    # status line): browsers and curl drop them, aiohttp fails the request.
                    # Asked once without conditions, the full answer is framed by its length.
                    unconditioned = True
                    headers = {k: v for k, v in headers.items() if k.lower() not in _CONDITIONS}
                    continue
                kind, detail = _exception_kind(exc)
                return progress.fail(kind, detail)
            try:
                progress.address = _peer_address(resp)
                progress.status = resp.status
                progress.headers = _lower_headers(resp.headers)
                status = resp.status
                if not (follow_redirects and status in _REDIRECTS):
                    return await self._final(resp, progress, method, cap, read_body)

                location = resp.headers.get("Location")
                if not location:
                    return progress.fail("redirect", f"{status} without a Location header")
                try:
                    nxt = current.join(URL(_undropped(location))).with_fragment(None)
                except (ValueError, TypeError) as exc:
                    return progress.fail("redirect", f"bad Location {location!r}: {exc}")
                if nxt.scheme not in ("http", "https") or not nxt.raw_host:
                    return progress.fail("redirect", f"bad Location {location!r}")
                progress.hops.append(Hop(str(current), status, str(nxt)))
                visited.add((method, str(current)))
                if len(progress.hops) > self.settings.max_redirects:
                    return progress.fail(
                        "redirect", f"more than {self.settings.max_redirects} redirects"
                    )
                if (status == 303 and method != "HEAD") or (
                    status in (301, 302) and method == "POST"
                ):
                    method, data = "GET", None
                    headers = {k: v for k, v in headers.items() if k.lower() != "content-type"}
                if (method, str(nxt)) in visited:
                    return progress.fail("redirect", f"redirect loop back to {nxt}")
                if _origin(nxt) != _origin(current):
                    headers = {
                        k: v for k, v in headers.items() if k.lower() not in _CROSS_ORIGIN_DROP
                    }
                await _discard(resp)
                current = nxt
            finally:
                resp.release()

    async def _final(
        self,
        resp: aiohttp.ClientResponse,
        progress: _Progress,
        method: str,
        cap: int,
        read_body: bool,
    ) -> FetchResult:
        status = resp.status
        headers = progress.headers
        body = b""
        decoded = wire = 0
        no_body = method == "HEAD" or status in (204, 304) or status < 200
        if not read_body:
            resp.close()  # do not drain what nobody will read
        elif not no_body:
            # Only a 2xx body is the point of the fetch. Any other answer is decided by its
            # status, whatever its body: a 429 whose page is undecodable, too large or cut
            # off is still a throttle (never a feed error), a 410 still gone.
            body_counts = 200 <= status < 300
            try:
                body, decoded, wire = await _read_body(
                    resp, headers, cap, self.settings.first_byte_timeout
                )
            except _TooLarge as exc:
                prefix, decoded, wire = exc.args
                resp.close()
                if body_counts:
                    return progress.fail(
                        "too_large",
                        f"body over {cap} bytes (after decompression)",
                        body=prefix,
                        bytes_read=decoded,
                        wire_bytes=wire,
                    )
                body = prefix
            except _BadEncoding as exc:
                resp.close()
                if body_counts:
                    return progress.fail("http", str(exc))
            except (aiohttp.ClientError, OSError, TimeoutError) as exc:
                if body_counts:
                    kind, detail = _exception_kind(exc)
                    return progress.fail(kind, detail)

        sized = {"body": body, "bytes_read": decoded, "wire_bytes": wire}
        if status == 429 or (status == 503 and "retry-after" in headers):
            seconds = _retry_after(
                resp.headers.getall("Retry-After", []), _server_now(headers.get("date"))
            )
            return progress.result(retry_after=seconds, **sized)
        if 200 <= status < 300 or status == 304:
            return progress.result(**sized)
        if status == 410:
            return progress.fail("gone", f"{status} {resp.reason or ''}".strip(), **sized)
        if is_bot_challenge(status, headers, body):
            return progress.fail("blocked", f"{status} bot challenge", **sized)
        if 300 <= status < 400 and not progress.hops and status in _REDIRECTS:
            return progress.result(**sized)  # follow_redirects=False: the caller reads Location
        return progress.fail("http", f"{status} {resp.reason or ''}".strip(), **sized)


def _server_now(date: str | None) -> datetime:
    """The moment a Retry-After HTTP-date counts from: the answer's own Date when it is one and
    within a day of our clock (a server an hour ahead stamps both with its clock: "two minutes
    after my now" read against ours was 62 minutes), else our clock."""
    ours = datetime.now(UTC)
    if date:
        try:
            theirs = parsedate_to_datetime(date)
        except (TypeError, ValueError, IndexError, OverflowError):
            return ours
        if theirs.tzinfo is None:
            theirs = theirs.replace(tzinfo=UTC)
        if abs((theirs - ours).total_seconds()) <= 86_400:
            return theirs
    return ours


def _retry_after(values: list[str], now: datetime) -> float:
    """Clamped seconds from every Retry-After header the answer carried (a proxy and the origin
    may each add one; joined, "120, 7200" reads as nothing): the longest readable one, since
    coming back later than asked is polite and sooner is not."""
    readable = [s for v in values if (s := retry_after_seconds(v, now)) is not None]
    if not readable:
        return parse_retry_after(None, now)
    return parse_retry_after(str(int(max(readable))), now)


async def _read_body(
    resp: aiohttp.ClientResponse, headers: Mapping[str, str], cap: int, idle: float
) -> tuple[bytes, int, int]:
    declared = headers.get("content-encoding", "").strip()
    codings = _content_codings(declared)
    if any(c not in _DECODABLE for c in codings):
        # Handing on bytes we cannot decode would record the server's fault as ours to
        # parse (not_a_feed, parse): say which coding it used that we never asked for.
        raise _BadEncoding(
            f"content-encoding {declared!r} not supported (we accept {ACCEPT_ENCODING})"
        )
    # aiohttp undoes "chunked" only; a server's "Transfer-Encoding: gzip, chunked" (never
    # asked for: we send no TE) was applied over the content codings, so it is undone first.
    transfer = headers.get("transfer-encoding", "").strip()
    layers = [c for c in _content_codings(transfer) if c != "chunked"]
    if any(c not in _DECODABLE for c in layers):
        raise _BadEncoding(f"transfer-encoding {transfer!r} not supported")
    codings += layers
    decoder = _Chain(codings, cap) if codings else None
    if decoder is None:
        length = headers.get("content-length", "")
        # A declared length over the cap takes the chunk loop below, which stops at cap + 1
        # bytes and keeps the prefix: robots.txt's first 500 KiB are its rules (Google's
        # practice), and a static file always declares its length.
        if length.isdigit() and int(length) <= cap:
            # Identity body of a declared size within the cap: aiohttp's parser stops at the
            # declared length (and raises if the connection ends short), so one read is as
            # safe as the chunk loop and cheaper for the small bodies most feeds are.
            body = await resp.read()
            return body, len(body), len(body)
    out = bytearray()
    wire = 0
    async for chunk in _chunks(resp, idle):
        wire += len(chunk)
        room = cap - len(out)
        try:
            piece = decoder.feed(chunk, room + 1) if decoder is not None else chunk
        except _InnerTooLarge as exc:  # within the cap so far, but no longer bounded
            out += exc.args[0]
            raise _TooLarge(bytes(out), len(out), wire) from None
        if len(piece) > room:
            out += piece[:room]
            raise _TooLarge(bytes(out), cap + 1, wire)
        out += piece
    if decoder is not None:
        decoder.finish()
    return bytes(out), len(out), wire


async def _chunks(resp: aiohttp.ClientResponse, idle: float) -> AsyncIterator[bytes]:
    """The body's chunks, each awaited at most ``idle`` seconds.

    When the framing breaks mid-body (a bad chunk size, endless trailers), aiohttp records the
    error on the connection's protocol, not on the body being read, and stops its read timer:
    the read would wait for the total cap and pass for a timeout (a network kind, counted
    towards an outage of ours). Our own timer notices, and the protocol says why."""
    protocol = getattr(resp, "_protocol", None)
    if protocol is None and resp.connection is not None:
        protocol = resp.connection.protocol
    while True:
        try:
            async with asyncio.timeout(idle):
                chunk = await resp.content.read(_CHUNK)
        except TimeoutError:
            broken = protocol.exception() if protocol is not None else None
            if isinstance(broken, HttpProcessingError):
                raise _BadEncoding(f"malformed response: {broken.message}") from None
            raise
        if not chunk:
            return
        yield chunk


async def _discard(resp: aiohttp.ClientResponse) -> None:
    """Read a small redirect body so the connection can be reused; leave a big one unread
    (release() then closes the connection instead)."""
    length = resp.headers.get("Content-Length", "")
    if length.isdigit() and int(length) <= _SMALL_REDIRECT_BODY:
        try:
            await resp.read()
        except (aiohttp.ClientError, OSError, TimeoutError):
            resp.close()


def _peer_address(resp: aiohttp.ClientResponse) -> str | None:
    """The address connected to. Read before any await: a body that arrived with the headers
    may already have released the connection, so the protocol (kept by the response) is asked
    first."""
    protocol = getattr(resp, "_protocol", None)
    transport = getattr(protocol, "transport", None)
    if transport is None and resp.connection is not None:
        transport = resp.connection.transport
    if transport is None:
        return None
    peer = transport.get_extra_info("peername")
    if isinstance(peer, tuple) and peer:
        return str(peer[0])
    return None


#: Fields whose repeats are kept a line each rather than joined into one comma list: each
#: X-Robots-Tag header may name the crawler it is for, and a comma would carry the first
#: header's crawler into the second ("otherbot: nofollow" + "noindex").
_LINE_PER_HEADER = frozenset({"x-robots-tag"})


def _lower_headers(raw: Any) -> dict[str, str]:
    out: dict[str, str] = {}
    for k, v in raw.items():
        key, v = _latin1(k.lower()), _latin1(v)
        if key in out:
            out[key] = f"{out[key]}{chr(10) if key in _LINE_PER_HEADER else ', '}{v}"
        else:
            out[key] = v
    return out
