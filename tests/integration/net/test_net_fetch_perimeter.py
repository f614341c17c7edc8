"""The perimeter on real sockets: a refused address gets no connection at all, at the first
request or at any redirect hop; the connection goes to the address that was checked.

Only loopback is used: 127.0.0.1 is allowed, 127.0.0.2 is not (the house rule's way to test a
refusal without ever dialling a private or remote address)."""

from __future__ import annotations

import socket

from aiohttp import web

from fairfetch.net.perimeter import Resolver

from .conftest import (
    FORBIDDEN,
    answer_ok,
    make_fetcher,
    net_settings,
    no_system_dns,
    raw_server,
    serve,
)


async def test_host_resolving_to_a_refused_address_gets_no_connection() -> None:
    f = make_fetcher(net_settings())
    try:
        async with raw_server(answer_ok, host="127.0.0.2") as guarded:
            r = await f.fetch(f"http://{FORBIDDEN}:{guarded.port}/feed")
            r2 = await f.fetch(f"http://sub.{FORBIDDEN}:{guarded.port}/feed")
    finally:
        await f.aclose()
    for result in (r, r2):
        assert result.error_kind == "perimeter"
        assert "127.0.0.2" in result.error_detail
        assert "loopback" in result.error_detail
        assert result.address is None
        assert result.status is None
    assert guarded.accepts == 0


async def test_control_the_guarded_listener_does_accept_when_allowed() -> None:
    # The same listener, with 127.0.0.2 allowed: proves the zero above is the perimeter's doing.
    f = make_fetcher(net_settings(allow_networks=("127.0.0.1/32", "127.0.0.2/32")))
    try:
        async with raw_server(answer_ok, host="127.0.0.2") as guarded:
            r = await f.fetch(f"http://{FORBIDDEN}:{guarded.port}/feed")
    finally:
        await f.aclose()
    assert r.ok
    assert r.address == "127.0.0.2"
    assert guarded.accepts == 1


async def test_ip_literal_refused_without_connection() -> None:
    f = make_fetcher(net_settings())
    try:
        async with raw_server(answer_ok, host="127.0.0.2") as guarded:
            literal = await f.fetch(f"http://127.0.0.2:{guarded.port}/")
            mapped = await f.fetch(f"http://[::ffff:127.0.0.2]:{guarded.port}/")
            numeric = await f.fetch(f"http://2130706434:{guarded.port}/")  # 127.0.0.2 as a number
    finally:
        await f.aclose()
    assert literal.error_kind == "perimeter"
    assert mapped.error_kind == "perimeter"
    assert numeric.error_kind == "perimeter"
    assert guarded.accepts == 0


async def test_redirect_hop_into_a_refused_address_is_refused() -> None:
    f = make_fetcher(net_settings())
    target: dict[str, str] = {}

    async def bounce(request: web.Request) -> web.Response:
        return web.Response(status=302, headers={"Location": target[request.path]})

    try:
        async with raw_server(answer_ok, host="127.0.0.2") as guarded:
            target["/by-name"] = f"http://{FORBIDDEN}:{guarded.port}/internal"
            target["/by-literal"] = f"http://127.0.0.2:{guarded.port}/internal"
            async with serve({"/by-name": bounce, "/by-literal": bounce}) as srv:
                by_name = await f.fetch(srv.url("/by-name"))
                by_literal = await f.fetch(srv.url("/by-literal"))
    finally:
        await f.aclose()
    for r, path in ((by_name, "/by-name"), (by_literal, "/by-literal")):
        assert r.error_kind == "perimeter", path
        assert len(r.hops) == 1
        assert r.hops[0].location == target[path]
        assert r.final_url == target[path]
        assert r.status is None  # the refused hop never answered; the 302 is in the hops
        assert r.address is None
    assert guarded.accepts == 0


class RebindingResolver(Resolver):
    """Answers 127.0.0.1 once, then 127.0.0.2 for ever: a DNS-rebinding attacker's name server."""

    def __init__(self) -> None:
        super().__init__((), getaddrinfo=no_system_dns)
        self.calls = 0

    async def resolve(self, host: str, port: int = 0, family: int = socket.AF_UNSPEC) -> list[str]:
        self.calls += 1
        return ["127.0.0.1"] if self.calls == 1 else ["127.0.0.2"]


async def test_connection_goes_to_the_checked_address_no_second_lookup() -> None:
    resolver = RebindingResolver()
    f = make_fetcher(net_settings(), resolver=resolver)
    try:
        async with raw_server(answer_ok, host="127.0.0.2") as guarded:
            async with serve({"/": _ok}) as srv:
                r = await f.fetch(f"http://rebind.example:{srv.port}/")
    finally:
        await f.aclose()
    assert r.ok
    assert r.address == "127.0.0.1"
    assert resolver.calls == 1  # checked once, connected to what was checked
    assert guarded.accepts == 0


async def _ok(request: web.Request) -> web.Response:
    return web.Response(text="ok")


async def test_mixed_answer_connects_only_to_allowed_address() -> None:
    class Mixed(Resolver):
        async def resolve(self, host: str, port: int = 0, family: int = 0) -> list[str]:
            return ["127.0.0.2", "127.0.0.1"]

    f = make_fetcher(net_settings(), resolver=Mixed((), getaddrinfo=no_system_dns))
    try:
        async with raw_server(answer_ok, host="127.0.0.2") as guarded:
            async with serve({"/": _ok}) as srv:
                r = await f.fetch(f"http://mixed.example:{srv.port}/")
    finally:
        await f.aclose()
    assert r.ok
    assert r.address == "127.0.0.1"
    assert guarded.accepts == 0


def test_bad_settings_fail_at_construction() -> None:
    import pytest

    from fairfetch.errors import ConfigError

    with pytest.raises(ConfigError, match=r"'10\.0\.0\.0/99'"):
        make_fetcher(net_settings(allow_networks=("10.0.0.0/99",)))
    with pytest.raises(ConfigError, match="'broken'"):
        from fairfetch.net.fetch import Fetcher

        Fetcher(net_settings(resolve=("broken",)))


async def test_default_settings_refuse_loopback() -> None:
    # No allow list at all: even 127.0.0.1 is refused, and nothing is connected to.
    f = make_fetcher(net_settings(allow_networks=()))
    try:
        async with raw_server(answer_ok) as srv:
            r = await f.fetch(srv.url("/", host="local.test"))
    finally:
        await f.aclose()
    assert r.error_kind == "perimeter"
    assert srv.accepts == 0
