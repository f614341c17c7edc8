"""Politeness keys: whose server a request lands on, so whose budget it spends.

:func:`politeness_key` names the budget: a detected backend (``backend:substack``), else the
private-section suffix a host is under (``blogspot.com``, ``github.io``: one backend serves every
blog there although the PSL makes each its own registrable domain), else the registrable domain
(``example.co.uk``). IP literals key by themselves. :class:`BackendGrouper` adds backends found
by evidence: hosts of different registrable domains on one address that are throttled in the
same window share one key. Pure, offline (the PSL ships with publicsuffixlist).
"""

from __future__ import annotations

import ipaddress
from collections import deque
from functools import lru_cache
from urllib.parse import urlsplit

from publicsuffixlist import PSLFILE, PublicSuffixList
from yarl import URL

from fairfetch.net.ip_literals import ip_literal

__all__ = ["BackendGrouper", "host_of", "politeness_key", "registrable_domain"]


@lru_cache(maxsize=1)
def _psl() -> tuple[PublicSuffixList, frozenset[str]]:
    """The one PSL instance (with private rules), and the private section's rules.

    The library does not say which section a suffix came from, so the private rules are read
    once from the same shipped file it parses.
    """
    private: set[str] = set()
    inside = False
    with open(PSLFILE, encoding="utf-8") as fh:
        for line in fh:
            text = line.strip()
            if text == "// ===BEGIN PRIVATE DOMAINS===":
                inside = True
            elif text == "// ===END PRIVATE DOMAINS===":
                inside = False
            elif inside and text and not text.startswith("//"):
                rule = text.split()[0].lower()
                private.add(rule)
                try:
                    private.add(rule.encode("idna").decode("ascii"))
                except UnicodeError:
                    pass
    return PublicSuffixList(), frozenset(private)


def host_of(url_or_host: str) -> str:
    """The lower-cased hostname of a URL (or of a bare host), without brackets or trailing dot."""
    if "/" in url_or_host:
        host = urlsplit(url_or_host).hostname or ""
    else:
        host = url_or_host.strip().lower()
        if host.startswith("["):
            host = host[1 : host.find("]")] if "]" in host else host[1:]
        elif host.count(":") == 1:  # host:port
            host = host.partition(":")[0]
    host = host.rstrip(".")
    if not host.isascii():
        host = _ascii_host(host)
    return host


@lru_cache(maxsize=4096)
def _ascii_host(host: str) -> str:
    """The IDNA form the connection goes to (yarl's own encoding): ``bücher.de`` and
    ``xn--bcher-kva.de`` are one host, with one slot and one key, however a feed spells it."""
    try:
        return URL.build(scheme="http", host=host).raw_host or host
    except (ValueError, UnicodeError):
        return host


@lru_cache(maxsize=65536)
def _domain_and_key(host: str) -> tuple[str, str]:
    if not host or ip_literal(host) is not None:
        return host, host
    psl, private = _psl()
    domain = psl.privatesuffix(host) or host
    suffix = psl.publicsuffix(host)
    if suffix and (suffix in private or ("*." + suffix.partition(".")[2]) in private):
        return domain, suffix
    return domain, domain


def registrable_domain(host: str) -> str:
    """The registrable domain of ``host`` (PSL, private section included, shipped offline).

    ``foo.blogspot.com`` → ``foo.blogspot.com`` (the PSL says so); ``a.b.example.co.uk`` →
    ``example.co.uk``; an IP address or a bare suffix is returned as it is.
    """
    return _domain_and_key(host_of(host))[0]


def politeness_key(url_or_host: str, backend: str | None = None) -> str:
    """The budget a request spends: ``backend`` if known, else the private-section suffix the
    host is under, else its registrable domain. Cached: this runs for every request."""
    if backend:
        return backend
    return _domain_and_key(host_of(url_or_host))[1]


class BackendGrouper:
    """Backends found by evidence: hosts that share an address and get throttled together.

    When hosts of at least ``min_domains`` different registrable domains, all resolving to one
    address, are throttled within ``window`` seconds, one server is rate-limiting all of them,
    so they share the key ``backend:addr:<address>``. Grouping is sticky (the evidence does not
    expire with the window) and a host keeps the first group it joined. Pure: the caller passes
    ``now``.
    """

    def __init__(self, *, window: float = 60.0, min_domains: int = 2) -> None:
        self.window = window
        self.min_domains = min_domains
        self._recent: dict[str, deque[tuple[float, str]]] = {}
        self._grouped: dict[str, str] = {}  # address -> key
        self._backend: dict[str, str] = {}  # host -> key

    def observe_throttle(self, host: str, address: str, now: float) -> str | None:
        """Record a throttle of ``host`` served from ``address``; returns the host's backend key
        if it now has one."""
        host = host_of(host)
        address = str(ipaddress.ip_address(address.strip("[]")))
        if host in self._backend:
            return self._backend[host]
        key = self._grouped.get(address)
        if key is not None:
            self._backend[host] = key
            return key
        recent = self._recent.setdefault(address, deque())
        recent.append((now, host))
        while recent and recent[0][0] < now - self.window:
            recent.popleft()
        domains = {registrable_domain(h) for _, h in recent}
        if len(domains) < self.min_domains:
            return None
        key = f"backend:addr:{address}"
        self._grouped[address] = key
        for _, h in recent:
            self._backend.setdefault(h, key)
        del self._recent[address]
        return self._backend[host]

    def backend_for(self, host: str) -> str | None:
        return self._backend.get(host_of(host))

    def groups(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for host, key in self._backend.items():
            out.setdefault(key, []).append(host)
        return {k: sorted(v) for k, v in out.items()}
