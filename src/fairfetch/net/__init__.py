"""fairfetch.net — the only code that talks to the web: perimeter, politeness, fetches.

Everything a caller needs is re-exported here; the submodules say why each part is the way it is.
"""

from fairfetch.net.backends import detect_backend
from fairfetch.net.fetch import Fetcher
from fairfetch.net.outcome import ERROR_KINDS, NETWORK_ERROR_KINDS, FetchResult, Hop
from fairfetch.net.perimeter import Resolver, check_address
from fairfetch.net.politeness import (
    BackendGrouper,
    Dispatcher,
    Feedback,
    KeyStats,
    PolitenessState,
    politeness_key,
    registrable_domain,
)
from fairfetch.net.retry_after import parse_retry_after
from fairfetch.net.robots import RobotsCache

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
