"""Which addresses fairfetch may reach, and the resolver that hands only those to the connector.

A crawler fetches URLs that strangers wrote (feeds, OPML files, redirects, WebSub hubs). Without a
perimeter any of them can point it at the operator's own network: the cloud metadata service, a
database on 10.0.0.5, the admin page on 127.0.0.1. So every address is checked *after* resolution
and *before* a connection, and the connection goes to the address that was checked: the checking
resolver is the connector's only resolver, so there is no second lookup an attacker's DNS could
answer differently (DNS rebinding).

``check_address`` is the pure decision; ``Resolver`` applies ``FAIRFETCH_RESOLVE`` overrides and
otherwise asks the system (``getaddrinfo``); ``CheckingResolver`` is the aiohttp adapter that
joins the two and refuses with :class:`PerimeterRefused`.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from aiohttp.abc import AbstractResolver, ResolveResult

from fairfetch.errors import ConfigError
from fairfetch.net.idn import idna_host
from fairfetch.net.ip_literals import ip_literal

__all__ = [
    "METADATA_ADDRESSES",
    "CheckingResolver",
    "PerimeterRefused",
    "Resolver",
    "check_address",
    "embedded_ipv4",
    "parse_allow_networks",
    "parse_resolve_entries",
]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

#: Cloud instance-metadata endpoints. Most sit in ranges refused anyway; Azure's wire server
#: (168.63.129.16) is a *public* address and must be named. A broad allowed CIDR does not open
#: these: only an allowed network that is exactly the one address does (see check_address).
METADATA_ADDRESSES: frozenset[IPAddress] = frozenset(
    ipaddress.ip_address(a)
    for a in (
        "169.254.169.254",  # AWS, GCP, Azure IMDS, OpenStack, DigitalOcean, Oracle, …
        "169.254.169.123",  # AWS time sync
        "169.254.169.253",  # AWS VPC DNS
        "169.254.170.2",  # AWS ECS task metadata
        "169.254.170.23",  # AWS EKS pod identity
        "169.254.0.23",  # Tencent Cloud
        "100.100.100.200",  # Alibaba Cloud
        "168.63.129.16",  # Azure wire server (public address!)
        "192.0.0.192",  # Oracle Cloud (legacy)
        "fd00:ec2::254",  # AWS IMDS over IPv6
        "fd00:ec2::23",  # AWS EKS pod identity over IPv6
        "fd20:ce::254",  # GCP metadata over IPv6
    )
)


def _nets(*pairs: tuple[str, str]) -> tuple[tuple[IPNetwork, str], ...]:
    return tuple((ipaddress.ip_network(n), why) for n, why in pairs)


# Reasons are spelled for people reading `feeds show`: the range's common name.
_V4_REFUSED = _nets(
    ("0.0.0.0/8", "unspecified ('this network')"),
    ("127.0.0.0/8", "loopback"),
    ("10.0.0.0/8", "private (RFC 1918)"),
    ("172.16.0.0/12", "private (RFC 1918)"),
    ("192.168.0.0/16", "private (RFC 1918)"),
    ("100.64.0.0/10", "carrier-grade NAT (RFC 6598)"),
    ("169.254.0.0/16", "link-local"),
    ("192.0.0.0/24", "IETF protocol assignments"),
    ("192.0.2.0/24", "documentation (TEST-NET-1)"),
    ("198.51.100.0/24", "documentation (TEST-NET-2)"),
    ("203.0.113.0/24", "documentation (TEST-NET-3)"),
    ("198.18.0.0/15", "benchmarking"),
    ("192.88.99.0/24", "deprecated 6to4 relay anycast"),
    ("224.0.0.0/4", "multicast"),
    ("240.0.0.0/4", "reserved"),  # includes 255.255.255.255 (broadcast)
)

_V6_REFUSED = _nets(
    ("::/128", "unspecified"),
    ("::1/128", "loopback"),
    ("64:ff9b:1::/48", "local-use NAT64"),
    ("100::/64", "discard-only"),
    ("2001::/32", "Teredo tunnel"),
    ("2001:db8::/32", "documentation"),
    ("3fff::/20", "documentation (RFC 9637)"),  # Python 3.11's is_global predates it
    ("fc00::/7", "unique local (private)"),
    ("fe80::/10", "link-local"),
    ("fec0::/10", "deprecated site-local"),
    ("ff00::/8", "multicast"),
)

_MAPPED = ipaddress.ip_network("::ffff:0:0/96")
_TRANSLATED = ipaddress.ip_network("::ffff:0:0:0/96")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_COMPATIBLE = ipaddress.ip_network("::/96")
_SIXTOFOUR = ipaddress.ip_network("2002::/16")


def embedded_ipv4(addr: ipaddress.IPv6Address) -> tuple[ipaddress.IPv4Address, str] | None:
    """The IPv4 address an IPv6 address stands for, with the embedding's name, if it has one.

    These are the forms through which "::ffff:127.0.0.1" or "64:ff9b::a9fe:a9fe" reach an IPv4
    host: the check must judge the IPv4 address inside, not the IPv6 wrapper.
    """
    if addr in _MAPPED:
        return ipaddress.IPv4Address(int(addr) & 0xFFFFFFFF), "IPv4-mapped"
    if addr in _TRANSLATED:
        return ipaddress.IPv4Address(int(addr) & 0xFFFFFFFF), "IPv4-translated"
    if addr in _NAT64:
        return ipaddress.IPv4Address(int(addr) & 0xFFFFFFFF), "NAT64"
    if addr in _SIXTOFOUR:
        return ipaddress.IPv4Address((int(addr) >> 80) & 0xFFFFFFFF), "6to4"
    if addr in _COMPATIBLE and int(addr) > 1:
        return ipaddress.IPv4Address(int(addr) & 0xFFFFFFFF), "IPv4-compatible"
    return None


@lru_cache(maxsize=256)
def _parse_network(entry: str) -> IPNetwork:
    text = entry.strip()
    if text.startswith("[") and "]" in text:  # "[::1]/128" or "[::1]"
        inner, _, rest = text[1:].partition("]")
        text = inner + rest
    try:
        return ipaddress.ip_network(text, strict=False)
    except ValueError as exc:
        raise ConfigError(f"allow_networks: {entry!r} is not a CIDR ({exc})") from None


def parse_allow_networks(entries: Iterable[str | IPNetwork]) -> tuple[IPNetwork, ...]:
    """Parse ``FAIRFETCH_ALLOW_NETWORKS`` entries; a bad one is a ConfigError naming it."""
    out: list[IPNetwork] = []
    for entry in entries:
        if isinstance(entry, ipaddress.IPv4Network | ipaddress.IPv6Network):
            out.append(entry)
        elif entry.strip():
            out.append(_parse_network(entry))
    return tuple(out)


def _allowed(addr: IPAddress, nets: Sequence[IPNetwork], *, exact: bool) -> bool:
    for net in nets:
        if net.version != addr.version or addr not in net:
            continue
        if not exact or net.num_addresses == 1:
            return True
    return False


def _refusal(addr: IPAddress) -> str | None:
    table = _V4_REFUSED if addr.version == 4 else _V6_REFUSED
    for net, why in table:
        if addr in net:
            return why
    return None


def check_address(
    ip: str | IPAddress, allow_networks: Iterable[str | IPNetwork] = ()
) -> str | None:
    """None when ``ip`` may be reached, else the reason it may not.

    Order matters: metadata endpoints first (an allowed CIDR opens them only when it is exactly
    that address, so ``169.254.0.0/16`` in the allow list does not hand out cloud credentials),
    then the allow list (checked against the address and the IPv4 address it embeds), then the
    named ranges, then Python's own "is it globally routable" as a backstop for ranges we did not
    name.
    """
    try:
        addr = ipaddress.ip_address(ip) if isinstance(ip, str) else ip
    except ValueError:
        return f"{ip!r} is not an IP address"
    if isinstance(addr, ipaddress.IPv6Address) and addr.scope_id:
        addr = ipaddress.IPv6Address(int(addr))
    nets = parse_allow_networks(allow_networks)
    inner = embedded_ipv4(addr) if isinstance(addr, ipaddress.IPv6Address) else None
    candidates: list[IPAddress] = [addr] + ([inner[0]] if inner else [])

    for cand in candidates:
        if cand in METADATA_ADDRESSES:
            if _allowed(cand, nets, exact=True):
                return None
            return f"{cand} is a cloud metadata endpoint"

    if any(_allowed(cand, nets, exact=False) for cand in candidates):
        return None

    why = _refusal(addr)
    if why:
        return f"{addr} is {why}"
    if inner is not None:
        v4, form = inner
        why = _refusal(v4)
        if why:
            return f"{addr} is the {form} form of {v4}, which is {why}"
        if form == "IPv4-compatible":
            return f"{addr} is a deprecated IPv4-compatible address"
        if not v4.is_global:
            return f"{addr} is the {form} form of {v4}, which is not globally routable"
        return None
    if not addr.is_global or (addr.version == 6 and addr.is_reserved):
        return f"{addr} is not globally routable"
    return None


# --- resolution -------------------------------------------------------------------------------


class PerimeterRefused(OSError):
    """Every address of ``host`` was refused. An OSError so aiohttp's connector passes it on
    (wrapped in ClientConnectorDNSError, from which the fetcher unwraps it)."""

    def __init__(
        self, host: str, reasons: Sequence[str], allow_networks: Sequence[IPNetwork] = ()
    ) -> None:
        # An operator reading "127.0.0.2 is loopback" asks what *is* allowed: the message says,
        # and names the setting that changes it.
        opened = ", ".join(str(net) for net in allow_networks)
        hint = f"not in allow_networks ({opened})" if opened else "allow_networks is empty"
        super().__init__(f"{host}: " + "; ".join(reasons) + f" [{hint}]")
        self.host = host
        self.reasons = tuple(reasons)


@dataclass(frozen=True)
class _Override:
    pattern: str  # "example.com" or "*.example.com"
    port: int | None
    addresses: tuple[str, ...]


def _normalise_host(host: str) -> str:
    host = host.strip().rstrip(".").lower()
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not host.isascii():
        host = idna_host(host)
    return host



#: A host name after IDNA (letters, digits, "-", "_" in dot-separated labels).
_HOST_NAME = re.compile(r"[a-z0-9_-]+(\.[a-z0-9_-]+)*")


def _parse_ip(text: str, entry: str) -> str:
    text = text.strip()
    if text.startswith("["):
        if not text.endswith("]"):
            raise ConfigError(f"resolve: {entry!r}: unbalanced brackets around the address")
        text = text[1:-1]
    try:
        return str(ipaddress.ip_address(text))
    except ValueError:
        raise ConfigError(f"resolve: {entry!r}: {text!r} is not an IP address") from None


def parse_resolve_entries(entries: Iterable[str]) -> tuple[_Override, ...]:
    """Parse ``HOST:IP`` / ``*.domain:IP`` / ``HOST:PORT:IP`` (curl's form) entries.

    IPv6 addresses go in brackets (``host:[::1]``); a bare IPv6 address is accepted when it
    parses as one. Several entries for one host add addresses. A malformed entry is a
    ConfigError that quotes it.
    """
    merged: dict[tuple[str, int | None], list[str]] = {}
    for raw in entries:
        entry = raw.strip()
        if not entry:
            continue
        host, sep, rest = entry.partition(":")
        if not sep or not host.strip() or not rest.strip():
            raise ConfigError(f"resolve: {entry!r} is not HOST:IP")
        try:
            pattern = _normalise_host(host)
        except UnicodeError as exc:
            raise ConfigError(f"resolve: {entry!r}: not a host name ({exc})") from None
        if pattern in ("*", "*."):
            raise ConfigError(f"resolve: {entry!r}: the wildcard needs a domain")
        if "*" in pattern and not (pattern.startswith("*.") and "*" not in pattern[2:]):
            raise ConfigError(f"resolve: {entry!r}: only a leading '*.' wildcard is allowed")
        name = pattern.removeprefix("*.")
        if not _HOST_NAME.fullmatch(name):
            # Never a URL's host (a space, a slash, a URL pasted whole): the override would
            # never apply, and the name would go to the system's resolver instead.
            raise ConfigError(f"resolve: {entry!r}: {host.strip()!r} is not a host name")
        port: int | None = None
        head, sep2, tail = rest.partition(":")
        if sep2 and head.isdigit() and not rest.startswith("["):
            # curl's HOST:PORT:IP, unless the whole rest is a bare IPv6 address.
            try:
                ipaddress.IPv6Address(rest.strip())
            except ValueError:
                port = int(head)
                if not 0 < port < 65536:
                    raise ConfigError(f"resolve: {entry!r}: port {port} out of range") from None
                rest = tail
        merged.setdefault((pattern, port), []).append(_parse_ip(rest, entry))
    return tuple(_Override(p, port, tuple(a)) for (p, port), a in merged.items())


GetAddrInfo = Callable[..., Awaitable[list[tuple[Any, ...]]]]


class Resolver:
    """Name → addresses, with ``FAIRFETCH_RESOLVE`` overrides taking precedence.

    Overrides: an exact host beats a wildcard, a longer wildcard beats a shorter one, a
    port-specific entry beats a port-less one. ``*.example.test`` matches ``a.example.test`` and
    ``b.a.example.test``, not ``example.test``. Overridden addresses still pass the perimeter.
    """

    def __init__(
        self,
        overrides: Iterable[str] = (),
        *,
        timeout: float | None = None,
        getaddrinfo: GetAddrInfo | None = None,
    ) -> None:
        parsed = parse_resolve_entries(overrides)
        self._exact: dict[tuple[str, int | None], tuple[str, ...]] = {}
        self._wild: list[tuple[str, int | None, tuple[str, ...]]] = []
        for o in parsed:
            if o.pattern.startswith("*."):
                self._wild.append((o.pattern[1:], o.port, o.addresses))  # ".example.test"
            else:
                self._exact[(o.pattern, o.port)] = o.addresses
        # Longest suffix first; port-specific before port-less at equal length.
        self._wild.sort(key=lambda w: (-len(w[0]), w[1] is None))
        self._timeout = timeout
        self._getaddrinfo = getaddrinfo
        self._cnames: OrderedDict[str, str] = OrderedDict()

    @classmethod
    def from_settings(cls, settings: Any) -> Resolver:
        return cls(settings.resolve, timeout=settings.connect_timeout)

    def override(self, host: str, port: int | None = None) -> tuple[str, ...] | None:
        """The overridden addresses for ``host`` (and ``port``), or None."""
        name = _normalise_host(host)
        for key in ((name, port), (name, None)):
            if key in self._exact:
                return self._exact[key]
        for suffix, p, addrs in self._wild:
            if name.endswith(suffix) and (p is None or p == port):
                return addrs
        return None

    async def resolve(self, host: str, port: int = 0, family: int = socket.AF_UNSPEC) -> list[str]:
        """Addresses for ``host``. Raises ``socket.gaierror`` when the name does not resolve."""
        found = self.override(host, port or None)
        if found is not None:
            return [a for a in found if _family_ok(a, family)] or list(found)
        name = _normalise_host(host)
        literal = ip_literal(name)
        if literal is not None:
            return [str(literal)]
        lookup = self._getaddrinfo or asyncio.get_running_loop().getaddrinfo
        coro = lookup(name, port, family=family, type=socket.SOCK_STREAM, flags=socket.AI_CANONNAME)
        try:
            infos = await (asyncio.wait_for(coro, self._timeout) if self._timeout else coro)
        except TimeoutError:
            # A name server that does not answer is a DNS failure, not a slow publisher.
            raise socket.gaierror(socket.EAI_AGAIN, f"{host}: lookup timed out") from None
        out: list[str] = []
        canonical = next((str(i[3]) for i in infos if len(i) > 3 and i[3]), "")
        canonical = canonical.rstrip(".").lower()
        if canonical and canonical != name:
            self._cnames[name] = canonical
            self._cnames.move_to_end(name)
            if len(self._cnames) > _MAX_CNAMES:
                self._cnames.popitem(last=False)
        for info in infos:
            address = str(info[4][0]).split("%", 1)[0]
            if address not in out:
                out.append(address)
        if not out:
            raise socket.gaierror(socket.EAI_NONAME, f"{host}: no addresses")
        return out

    def canonical_name(self, host: str) -> str | None:
        """The CNAME target the last lookup of ``host`` ended at, if it was not ``host``
        itself: custom domains point at their platform (``ghs.google.com``,
        ``target.substack-custom-domains.com``), which ``detect_backend`` reads."""
        return self._cnames.get(_normalise_host(host))


_MAX_CNAMES = 50_000


def _family_ok(address: str, family: int) -> bool:
    if family == socket.AF_INET:
        return ":" not in address
    if family == socket.AF_INET6:
        return ":" in address
    return True


class CheckingResolver(AbstractResolver):
    """aiohttp resolver: resolve once, check every address, hand over only the allowed ones.

    The connector connects to exactly what this returns (its DNS cache holds only checked
    answers), so the address checked is the address connected to. When no address is allowed
    it raises :class:`PerimeterRefused` and no connection is attempted.
    """

    def __init__(self, resolver: Resolver, allow_networks: Iterable[str | IPNetwork]) -> None:
        self.resolver = resolver
        self.allow_networks = parse_allow_networks(allow_networks)

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        addresses = await self.resolver.resolve(host, port, family)
        allowed: list[ResolveResult] = []
        reasons: list[str] = []
        for address in addresses:
            why = check_address(address, self.allow_networks)
            if why:
                reasons.append(why)
                continue
            allowed.append(
                ResolveResult(
                    hostname=host,
                    host=address,
                    port=port,
                    family=socket.AF_INET6 if ":" in address else socket.AF_INET,
                    proto=0,
                    flags=socket.AI_NUMERICHOST | socket.AI_NUMERICSERV,
                )
            )
        if not allowed:
            raise PerimeterRefused(host, reasons, self.allow_networks)
        return allowed

    async def close(self) -> None:
        return None
