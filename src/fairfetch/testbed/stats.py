"""What the testbed saw, so tests can assert politeness from the server's side.

Counters are kept per host, per registrable domain (Public Suffix List) and per platform
(backend), because politeness is promised at each of those levels: a crawler that keeps one
request per hostname can still flood a platform that serves hundreds of hostnames.
"""

from __future__ import annotations

import ipaddress
import threading
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from publicsuffixlist import PublicSuffixList

__all__ = ["Counter", "Stats", "registrable_domain"]

_PSL = PublicSuffixList()


@lru_cache(maxsize=65536)
def registrable_domain(host: str) -> str:
    """``a.blogs.test`` -> ``blogs.test``; a bare public suffix or IP is its own domain.

    An IP is checked first: the PSL reads ``127.0.0.2`` as labels and answers ``0.2``, which
    would merge every address ending in ``.0.2`` into one "domain".
    """
    try:
        ipaddress.ip_address(host.removeprefix("[").removesuffix("]"))
    except ValueError:
        return _PSL.privatesuffix(host) or host
    return host


@dataclass
class Counter:
    requests: int = 0
    in_flight: int = 0
    max_in_flight: int = 0
    throttled: int = 0
    """429 responses sent."""
    conditional_requests: int = 0
    """Requests carrying If-None-Match or If-Modified-Since."""
    conditional_hits: int = 0
    """304 responses sent."""
    statuses: dict[int, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "in_flight": self.in_flight,
            "max_in_flight": self.max_in_flight,
            "throttled": self.throttled,
            "conditional_requests": self.conditional_requests,
            "conditional_hits": self.conditional_hits,
            "statuses": {str(k): v for k, v in sorted(self.statuses.items())},
        }


class Stats:
    """Thread-safe counters (the testbed may run in its own thread while a test reads them)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.total = Counter()
        self.hosts: dict[str, Counter] = {}
        self.domains: dict[str, Counter] = {}
        self.platforms: dict[str, Counter] = {}

    def _counters(self, host: str, platform: str | None) -> list[Counter]:
        found = [self.total]
        for table, key in (
            (self.hosts, host),
            (self.domains, registrable_domain(host)),
            (self.platforms, platform),
        ):
            if key is None:
                continue
            counter = table.get(key)
            if counter is None:
                counter = table[key] = Counter()
            found.append(counter)
        return found

    def begin(self, host: str, platform: str | None, *, conditional: bool) -> list[Counter]:
        """A request arrived; returns the counters to hand back to :meth:`end`."""
        with self._lock:
            counters = self._counters(host, platform)
            for c in counters:
                c.requests += 1
                c.in_flight += 1
                if c.in_flight > c.max_in_flight:
                    c.max_in_flight = c.in_flight
                if conditional:
                    c.conditional_requests += 1
            return counters

    def end(self, counters: list[Counter], status: int | None) -> None:
        """The request is done (answered, failed or abandoned by the client)."""
        with self._lock:
            for c in counters:
                c.in_flight -= 1
                if status is not None:
                    c.statuses[status] = c.statuses.get(status, 0) + 1
                    if status == 429:
                        c.throttled += 1
                    elif status == 304:
                        c.conditional_hits += 1

    def reset(self) -> None:
        """Zero every counter but keep requests still in flight counted (they will end).

        Counters are cleared in place: a request in flight holds its counters and decrements
        them when it ends.
        """
        with self._lock:
            for table in (self.hosts, self.domains, self.platforms):
                for key, c in list(table.items()):
                    if c.in_flight:
                        _clear(c)
                    else:
                        del table[key]
            _clear(self.total)

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            return {
                "total": self.total.as_dict(),
                "hosts": {k: c.as_dict() for k, c in sorted(self.hosts.items())},
                "domains": {k: c.as_dict() for k, c in sorted(self.domains.items())},
                "platforms": {k: c.as_dict() for k, c in sorted(self.platforms.items())},
            }


def _clear(c: Counter) -> None:
    c.requests = c.throttled = c.conditional_requests = c.conditional_hits = 0
    c.max_in_flight = c.in_flight
    c.statuses = {}
