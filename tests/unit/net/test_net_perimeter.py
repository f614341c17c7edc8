"""The perimeter as pure functions: every refused range, embedded IPv4 forms, the allow list,
and the resolver's overrides. No traffic: these addresses are only ever judged, never dialled."""

from __future__ import annotations

import socket

import pytest

from fairfetch.errors import ConfigError
from fairfetch.net.perimeter import (
    CheckingResolver,
    PerimeterRefused,
    Resolver,
    check_address,
    embedded_ipv4,
    parse_allow_networks,
    parse_resolve_entries,
)

REFUSED = {
    # IPv4
    "0.0.0.0": "unspecified",
    "0.1.2.3": "unspecified",
    "127.0.0.1": "loopback",
    "127.255.255.254": "loopback",
    "10.0.0.1": "private",
    "10.255.255.255": "private",
    "172.16.0.1": "private",
    "172.31.255.254": "private",
    "192.168.1.1": "private",
    "100.64.0.1": "carrier-grade NAT",
    "100.127.255.254": "carrier-grade NAT",
    "169.254.1.1": "link-local",
    "224.0.0.1": "multicast",
    "239.255.255.250": "multicast",
    "240.0.0.1": "reserved",
    "255.255.255.255": "reserved",
    "192.0.2.10": "documentation",
    "198.51.100.7": "documentation",
    "203.0.113.9": "documentation",
    "198.18.0.1": "benchmarking",
    "192.0.0.8": "IETF",
    # IPv6
    "::": "unspecified",
    "::1": "loopback",
    "fe80::1": "link-local",
    "fe80::1%eth0": "link-local",
    "fec0::1": "site-local",
    "fc00::1": "unique local",
    "fd12:3456::1": "unique local",
    "ff02::1": "multicast",
    "2001:db8::1": "documentation",
    "100::1": "discard",
    "2001::1": "Teredo",
    "64:ff9b:1::1": "local-use NAT64",
}

EMBEDDED_REFUSED = {
    "::ffff:127.0.0.1": ("IPv4-mapped", "loopback"),
    "::ffff:10.1.2.3": ("IPv4-mapped", "private"),
    "::ffff:100.64.1.1": ("IPv4-mapped", "carrier-grade NAT"),
    "::ffff:0:192.168.0.1": ("IPv4-translated", "private"),
    "64:ff9b::7f00:1": ("NAT64", "loopback"),
    "64:ff9b::10.0.0.1": ("NAT64", "private"),
    "2002:7f00:1::1": ("6to4", "loopback"),
    "2002:c0a8:101::": ("6to4", "private"),
    "::127.0.0.1": ("IPv4-compatible", "loopback"),
    "::10.0.0.1": ("IPv4-compatible", "private"),
}

METADATA = [
    "169.254.169.254",
    "169.254.170.2",
    "100.100.100.200",
    "168.63.129.16",  # Azure: a *public* address, refused by name
    "fd00:ec2::254",
    "::ffff:169.254.169.254",
    "64:ff9b::a9fe:a9fe",
]

PUBLIC = [
    "8.8.8.8",
    "1.1.1.1",
    "93.184.216.34",
    "172.32.0.1",  # just outside 172.16/12
    "100.128.0.1",  # just outside 100.64/10
    "192.169.0.1",
    "2606:4700::1111",
    "2a00:1450:4001::200e",
    "::ffff:8.8.8.8",
    "64:ff9b::808:808",  # NAT64 of a public address: how IPv6-only networks reach IPv4
    "2002:808:808::1",  # 6to4 of a public address
]


@pytest.mark.parametrize(("ip", "why"), sorted(REFUSED.items()))
def test_refused_ranges(ip: str, why: str) -> None:
    reason = check_address(ip)
    assert reason is not None
    assert why.lower() in reason.lower()


@pytest.mark.parametrize(("ip", "expected"), sorted(EMBEDDED_REFUSED.items()))
def test_embedded_ipv4_forms_are_judged_by_the_ipv4_inside(
    ip: str, expected: tuple[str, str]
) -> None:
    form, why = expected
    reason = check_address(ip)
    assert reason is not None
    assert form in reason
    assert why.lower() in reason.lower()


@pytest.mark.parametrize("ip", METADATA)
def test_metadata_endpoints_refused(ip: str) -> None:
    reason = check_address(ip)
    assert reason is not None
    assert "metadata" in reason


@pytest.mark.parametrize("ip", PUBLIC)
def test_public_addresses_pass(ip: str) -> None:
    assert check_address(ip) is None


def test_ipv4_compatible_of_public_address_still_refused() -> None:
    # ::8.8.8.8 is deprecated and routed nowhere sane; do not treat it as 8.8.8.8.
    assert check_address("::8.8.8.8") is not None


def test_not_an_address() -> None:
    assert "not an IP address" in (check_address("example.com") or "")


def test_embedded_ipv4_extraction() -> None:
    import ipaddress

    def emb(text: str) -> tuple[str, str] | None:
        found = embedded_ipv4(ipaddress.IPv6Address(text))
        return (str(found[0]), found[1]) if found else None

    assert emb("::ffff:1.2.3.4") == ("1.2.3.4", "IPv4-mapped")
    assert emb("64:ff9b::1.2.3.4") == ("1.2.3.4", "NAT64")
    assert emb("2002:0102:0304::5") == ("1.2.3.4", "6to4")
    assert emb("::1.2.3.4") == ("1.2.3.4", "IPv4-compatible")
    assert emb("::1") is None
    assert emb("2606:4700::1") is None


# --- the allow list ---


def test_allowed_cidr_opens_exactly_its_range() -> None:
    allow = ["127.0.0.1/32"]
    assert check_address("127.0.0.1", allow) is None
    assert check_address("127.0.0.2", allow) is not None
    assert check_address("::ffff:127.0.0.1", allow) is None  # the same host, mapped
    assert check_address("::1", allow) is not None


def test_allowed_private_network() -> None:
    allow = parse_allow_networks(["10.0.0.0/8", "fd00::/8"])
    assert check_address("10.20.30.40", allow) is None
    assert check_address("fd12::1", allow) is None
    assert check_address("192.168.0.1", allow) is not None


def test_broad_allow_does_not_open_metadata() -> None:
    assert check_address("169.254.169.254", ["169.254.0.0/16"]) is not None
    assert check_address("169.254.1.1", ["169.254.0.0/16"]) is None
    assert check_address("fd00:ec2::254", ["fd00::/8"]) is not None
    # …but naming the exact address does (a test rig impersonating a metadata service).
    assert check_address("169.254.169.254", ["169.254.169.254/32"]) is None


def test_allow_networks_accepts_brackets_and_bare_addresses() -> None:
    nets = parse_allow_networks(["[::1]/128", "127.0.0.1", " 10.0.0.0/8 ", ""])
    assert [str(n) for n in nets] == ["::1/128", "127.0.0.1/32", "10.0.0.0/8"]


@pytest.mark.parametrize("bad", ["10.0.0.0/33", "not-a-net", "1.2.3.4/abc", "::1/129"])
def test_malformed_allow_network_is_a_config_error_naming_it(bad: str) -> None:
    with pytest.raises(ConfigError, match="allow_networks") as info:
        parse_allow_networks(["127.0.0.1/32", bad])
    assert repr(bad) in str(info.value)


# --- resolve overrides ---


def test_parse_resolve_entries_forms() -> None:
    parsed = {
        (o.pattern, o.port): o.addresses
        for o in parse_resolve_entries(
            [
                "example.com:127.0.0.1",
                "Example.COM.:127.0.0.3",  # same host, normalised: addresses add up
                "*.test:127.0.0.1",
                "v6.example:[::1]",
                "bare6.example:::1",
                "port.example:8080:127.0.0.2",
            ]
        )
    }
    assert parsed == {
        ("example.com", None): ("127.0.0.1", "127.0.0.3"),
        ("*.test", None): ("127.0.0.1",),
        ("v6.example", None): ("::1",),
        ("bare6.example", None): ("::1",),
        ("port.example", 8080): ("127.0.0.2",),
    }


@pytest.mark.parametrize(
    "bad",
    [
        "example.com",
        "example.com:",
        ":127.0.0.1",
        "example.com:not-an-ip",
        "example.com:[::1",
        "a.*.com:127.0.0.1",
        "*.:127.0.0.1",
        "example.com:99999:127.0.0.1",
        "example.com:256.1.1.1",
        # A name IDNA cannot encode (a label over 63 characters) was a UnicodeError traceback.
        "a" * 64 + "\u00e9.test:127.0.0.1",
    ],
)
def test_malformed_resolve_entry_is_a_config_error_naming_it(bad: str) -> None:
    with pytest.raises(ConfigError, match="resolve") as info:
        parse_resolve_entries(["ok.test:127.0.0.1", bad])
    assert repr(bad.strip()) in str(info.value)


async def test_resolver_precedence() -> None:
    r = Resolver(
        [
            "*.test:127.0.0.1",
            "*.deep.test:127.0.0.2",
            "exact.deep.test:127.0.0.3",
            "exact.deep.test:8443:127.0.0.4",
        ]
    )
    assert await r.resolve("a.test") == ["127.0.0.1"]
    assert await r.resolve("b.a.test") == ["127.0.0.1"]
    assert await r.resolve("x.deep.test") == ["127.0.0.2"]  # longer wildcard wins
    assert await r.resolve("exact.deep.test", 80) == ["127.0.0.3"]  # exact beats wildcard
    assert await r.resolve("exact.deep.test", 8443) == ["127.0.0.4"]  # port-specific
    assert await r.resolve("EXACT.deep.test.") == ["127.0.0.3"]
    assert r.override("test") is None  # "*.test" does not match the bare domain


async def test_resolver_falls_back_to_getaddrinfo_and_reports_failure() -> None:
    calls: list[str] = []

    async def fake_getaddrinfo(host: str, port: int, **kw: object) -> list[tuple[object, ...]]:
        calls.append(host)
        if host == "missing.example":
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return [
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.9", port)),
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.9", port)),
            (socket.AF_INET6, socket.SOCK_STREAM, 6, "", ("::1", port, 0, 0)),
        ]

    r = Resolver(["*.test:127.0.0.1"], getaddrinfo=fake_getaddrinfo)
    assert await r.resolve("real.example", 80) == ["127.0.0.9", "::1"]
    assert await r.resolve("a.test") == ["127.0.0.1"]
    assert await r.resolve("127.0.0.5") == ["127.0.0.5"]  # literals are not looked up
    assert calls == ["real.example"]
    with pytest.raises(socket.gaierror):
        await r.resolve("missing.example")


async def test_checking_resolver_filters_and_refuses() -> None:
    r = Resolver(["mixed.test:127.0.0.1", "mixed.test:10.0.0.1", "bad.test:10.0.0.1"])
    checking = CheckingResolver(r, ["127.0.0.1/32"])
    got = await checking.resolve("mixed.test", 80)
    assert [x["host"] for x in got] == ["127.0.0.1"]  # only the checked, allowed address
    with pytest.raises(PerimeterRefused) as info:
        await checking.resolve("bad.test", 80)
    assert "10.0.0.1" in str(info.value)
    assert "private" in str(info.value)
    # What is open, and the setting that opens more: the operator's next question, answered.
    assert "not in allow_networks (127.0.0.1/32)" in str(info.value)


async def test_refusal_with_no_allow_list_says_it_is_empty() -> None:
    checking = CheckingResolver(Resolver(["bad.test:127.0.0.2"]), [])
    with pytest.raises(PerimeterRefused) as info:
        await checking.resolve("bad.test", 80)
    assert str(info.value) == "bad.test: 127.0.0.2 is loopback [allow_networks is empty]"


async def test_lookup_that_never_answers_is_a_dns_failure() -> None:
    import asyncio

    async def silent(host: str, port: int, **kw: object) -> list[tuple[object, ...]]:
        await asyncio.Event().wait()
        return []

    r = Resolver((), timeout=0.05, getaddrinfo=silent)
    with pytest.raises(socket.gaierror, match="timed out"):
        await r.resolve("slow-dns.example", 80)


async def test_resolver_remembers_the_canonical_name() -> None:
    async def cname_getaddrinfo(host: str, port: int, **kw: object) -> list[tuple[object, ...]]:
        assert kw.get("flags") == socket.AI_CANONNAME
        return [
            (socket.AF_INET, socket.SOCK_STREAM, 6, "ghs.google.com", ("127.0.0.9", port)),
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.10", port)),
        ]

    r = Resolver((), getaddrinfo=cname_getaddrinfo)
    assert await r.resolve("blog.example.org", 443) == ["127.0.0.9", "127.0.0.10"]
    assert r.canonical_name("Blog.Example.org.") == "ghs.google.com"
    assert r.canonical_name("other.example.org") is None


async def test_resolver_reads_idn_hosts_as_the_fetcher_sends_them() -> None:
    """IDNA 2008, as yarl encodes the host aiohttp connects to: Python's own "idna" codec is
    IDNA 2003, which maps "straße.test" to "strasse.test" — another domain, another owner. An
    override written for one must never apply to the other, nor a lookup go to the other."""
    import yarl

    asked: list[str] = []

    async def fake_getaddrinfo(host: str, port: int, **kw: object) -> list[tuple[object, ...]]:
        asked.append(host)
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.9", port))]

    sent = yarl.URL("http://straße.test/feed").raw_host
    assert sent == "xn--strae-oqa.test"
    r = Resolver(["straße.test:127.0.0.1"], getaddrinfo=fake_getaddrinfo)
    assert await r.resolve(sent) == ["127.0.0.1"]  # the override written in Unicode applies
    assert r.override("strasse.test") is None  # and not to the other domain
    assert await r.resolve("strasse.test") == ["127.0.0.9"]
    await Resolver((), getaddrinfo=fake_getaddrinfo).resolve("straße.test")
    assert asked == ["strasse.test", "xn--strae-oqa.test"]
