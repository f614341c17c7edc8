"""fairfetch.net — the only code that talks to the web: perimeter, politeness, fetches.

Everything a caller needs is re-exported here; the submodules say why each part is the way it is.
Names load on first use, so that importing a light module of this package (``outcome``, say, in
a worker process) does not pull in the HTTP client.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fairfetch._lazy import lazy_getattr

if TYPE_CHECKING:
    from fairfetch.net.backends import detect_backend
    from fairfetch.net.fetch import Fetcher
    from fairfetch.net.outcome import ERROR_KINDS, NETWORK_ERROR_KINDS, FetchResult, Hop
    from fairfetch.net.perimeter import Resolver, check_address
    from fairfetch.net.politeness import Dispatcher
    from fairfetch.net.politeness_keys import BackendGrouper, politeness_key, registrable_domain
    from fairfetch.net.politeness_state import Feedback, KeyStats, PolitenessState
    from fairfetch.net.retry_after import parse_retry_after
    from fairfetch.net.robots import RobotsCache

_WHERE = {
    "detect_backend": "backends",
    "Fetcher": "fetch",
    "ERROR_KINDS": "outcome",
    "NETWORK_ERROR_KINDS": "outcome",
    "FetchResult": "outcome",
    "Hop": "outcome",
    "Resolver": "perimeter",
    "check_address": "perimeter",
    "BackendGrouper": "politeness_keys",
    "Dispatcher": "politeness",
    "Feedback": "politeness_state",
    "KeyStats": "politeness_state",
    "PolitenessState": "politeness_state",
    "politeness_key": "politeness_keys",
    "registrable_domain": "politeness_keys",
    "parse_retry_after": "retry_after",
    "RobotsCache": "robots",
}


__getattr__ = lazy_getattr(
    "fairfetch.net", {name: f"fairfetch.net.{module}" for name, module in _WHERE.items()}
)


__all__ = [
    "ERROR_KINDS",
    "NETWORK_ERROR_KINDS",
    "BackendGrouper",
    "Dispatcher",
    "Feedback",
    "FetchResult",
    "Fetcher",
    "Hop",
    "KeyStats",
    "PolitenessState",
    "Resolver",
    "RobotsCache",
    "check_address",
    "detect_backend",
    "parse_retry_after",
    "politeness_key",
    "registrable_domain",
]
