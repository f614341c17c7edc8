"""Politeness keys: whose server a request lands on, so whose budget it spends.

:func:`politeness_key` names the budget: a detected backend (``backend:substack``), else the
private-section suffix a host is under (``blogspot.com``, ``github.io``: one backend serves every
blog there although the PSL makes each its own registrable domain), else the registrable domain
(``example.co.uk``). IP literals key by themselves. :class:`BackendGrouper` adds backends found
by evidence: hosts of different registrable domains on one address that are throttled in the
same window share one key while that evidence holds (an address alone proves nothing: a CDN
serves thousands of unrelated sites from one). Pure, offline (the PSL ships with
publicsuffixlist).
"""

from __future__ import annotations

import ipaddress
from collections import deque
from functools import lru_cache
from urllib.parse import urlsplit

from publicsuffixlist import PSLFILE, PublicSuffixList
from yarl import URL

from fairfetch.net.idn import idna_host
from fairfetch.net.ip_literals import ip_literal

__all__ = ["BackendGrouper", "has_known_tld", "host_of", "politeness_key", "registrable_domain"]


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
                    private.add(idna_host(rule))
                except UnicodeError:
                    pass
    return PublicSuffixList(), frozenset(private)


#: Top-level names reserved for tests, examples and local networks (RFC 2606, RFC 6761, RFC 9476,
#: ICANN's `internal`): not in the PSL, yet hosts users really type.
_SPECIAL_USE_TLDS = frozenset(
    {"test", "example", "invalid", "localhost", "local", "internal", "alt"}
)


@lru_cache(maxsize=1)
def _strict_psl() -> PublicSuffixList:
    return PublicSuffixList(accept_unknown=False)


def has_known_tld(host: str) -> bool:
    """Whether ``host`` ends in a top-level domain that exists (the PSL's, offline) or a
    special-use one. Tells ``example.com`` from ``feed.xml`` when a user gives no scheme."""
    host = host_of(host)
    if ip_literal(host) is not None:
        return True
    tld = host.rpartition(".")[2]
    return tld in _SPECIAL_USE_TLDS or _strict_psl().publicsuffix(host) is not None


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
    if not host.isascii():
        host = _ascii_host(host)  # may map a trailing "。" or "．" to "."
    return host.rstrip(".")


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
    address, are throttled within ``window`` seconds, one server may be rate-limiting all of
    them, so they share the key ``backend:addr:<address>`` (DESIGN.md, Politeness).

    An address is weak evidence on its own: a CDN or anycast address serves thousands of
    unrelated sites, each with its own limit, and two of them throttling us in one minute is a
    coincidence there. Grouping them for ever, and letting every later site throttled on that
    address join, put thousands of sites on one budget of 2 requests in flight. So:

    * a host is grouped only on evidence of its own: a throttle of it within ``window`` of a
      throttle of another domain on its address (joining a group needs the same as forming one);
    * the grouping holds while that evidence does: ``hold`` seconds after the host's latest
      correlated throttle, doubled each time the same host is grouped again (up to
      ``max_hold``). A real shared backend stops throttling once we pace it as one, so its
      group runs out and we burst it; that it throttles its domains together again is the
      strongest evidence there is, and each time it does we wait twice as long to test it
      again. A coincidence is held ``hold`` once;
    * the key stands for a backend shared by several domains: while fewer than ``min_domains``
      domains hold evidence at the address, its hosts go back to their own keys.

    Pure: the caller passes ``now`` (seconds on one monotonic clock); a query without it is
    answered as of the latest throttle the grouper was told of.
    """

    def __init__(
        self,
        *,
        window: float = 60.0,
        min_domains: int = 2,
        hold: float = 3600.0,
        max_hold: float = 7 * 86400.0,
    ) -> None:
        self.window = window
        self.min_domains = min_domains
        self.hold = hold
        self.max_hold = max_hold
        self._recent: dict[str, deque[tuple[float, str]]] = {}
        self._held: dict[str, dict[str, float]] = {}  # address -> host -> held until
        self._address: dict[str, str] = {}  # host -> the address it is grouped at
        self._times_grouped: dict[str, int] = {}  # host -> groupings so far (sets the hold)
        self._now = float("-inf")  # the latest throttle we were told of

    def observe_throttle(self, host: str, address: str, now: float) -> str | None:
        """Record a throttle of ``host`` served from ``address``; returns the host's backend key
        if it now has one."""
        host = host_of(host)
        address = str(ipaddress.ip_address(address.strip("[]")))
        self._now = max(self._now, now)
        recent = self._recent.setdefault(address, deque())
        recent.append((now, host))
        while recent and now - recent[0][0] > self.window:
            recent.popleft()
        if len({registrable_domain(h) for _, h in recent}) >= self.min_domains:
            # Every throttle in the window has one of another domain within the window.
            for h in {h for _, h in recent}:
                self._confirm(h, address, now)
        return self.backend_for(host, now)

    def _confirm(self, host: str, address: str, now: float) -> None:
        """Fresh correlated evidence for ``host`` at ``address``: (re)start its hold."""
        current = self._address.get(host)
        if current is not None and current != address:
            if self._held[current].get(host, float("-inf")) >= now:
                return  # a host keeps the group it is in while its evidence holds
            self._held[current].pop(host, None)
        held = self._held.setdefault(address, {})
        if held.get(host, float("-inf")) < now:  # not held: a new grouping
            self._times_grouped[host] = self._times_grouped.get(host, 0) + 1
        doublings = min(self._times_grouped[host] - 1, 32)
        held[host] = now + min(self.hold * 2.0**doublings, self.max_hold)
        self._address[host] = address

    def _group_holds(self, address: str, now: float) -> bool:
        domains: set[str] = set()
        for h, until in self._held.get(address, {}).items():
            if until >= now:
                domains.add(registrable_domain(h))
                if len(domains) >= self.min_domains:
                    return True
        return False

    def backend_for(self, host: str, now: float | None = None) -> str | None:
        """The host's backend key as of ``now``, if its evidence (and its group's) still holds."""
        host = host_of(host)
        address = self._address.get(host)
        if address is None:
            return None
        at = self._now if now is None else now
        if self._held[address].get(host, float("-inf")) < at:
            return None
        if not self._group_holds(address, at):
            return None
        return f"backend:addr:{address}"

    def groups(self, now: float | None = None) -> dict[str, list[str]]:
        """The groups that hold as of ``now`` (default: the latest throttle told of)."""
        out: dict[str, list[str]] = {}
        for host in self._address:
            key = self.backend_for(host, now)
            if key is not None:
                out.setdefault(key, []).append(host)
        return {k: sorted(v) for k, v in out.items()}
