"""What one fetch produced: the value the fetch engine hands to the crawler, the auditor and the
WebSub code. It is plain data so the decisions made from it (health, politeness) stay pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

__all__ = ["ERROR_KINDS", "NETWORK_ERROR_KINDS", "FetchResult", "Hop"]

#: Failure kinds recorded in ``crawls.error_kind`` and ``feeds.last_error`` (``kind: detail``).
ERROR_KINDS = (
    "dns",         # the name does not resolve
    "connect",     # refused, reset, unreachable
    "tls",         # certificate or handshake failure
    "timeout",     # connect, first byte or total time cap
    "too_large",   # body over the cap (after decompression)
    "perimeter",   # the address is not allowed
    "redirect",    # loop, chain over the cap, bad Location
    "http",        # any other non-2xx/304 status; detail holds the status
    "gone",        # 410
    "blocked",     # a 403 that is a bot challenge (cf-mitigated: challenge, …)
    "robots",      # disallowed by robots.txt
    "robots_unreachable",  # robots.txt answered 5xx, no good copy: deferred, not the feed's
    "duplicate",   # moved permanently onto a URL another feed already crawls: dead at once
    "not_a_feed",  # a 2xx body that is not a feed
    "parse",       # a feed we could not read at all
    "internal",    # a bug on our side (logged loudly); never counted against the feed
)

#: Kinds that say the network between us and them failed; many of these on unrelated keys in the
#: same minute mean the fault is ours (an outage).
NETWORK_ERROR_KINDS = frozenset({"dns", "connect", "timeout"})


@dataclass(frozen=True)
class Hop:
    """One redirect hop: ``url`` answered ``status`` pointing at ``location``."""

    url: str
    status: int
    location: str


@dataclass(frozen=True)
class FetchResult:
    url: str
    """The URL asked for."""
    final_url: str
    """The URL that produced the final response (after redirects)."""
    status: int | None = None
    """HTTP status of the final response; None when no response was had."""
    headers: Mapping[str, str] = field(default_factory=dict)
    """Final response headers, keys lower-cased."""
    body: bytes = b""
    hops: tuple[Hop, ...] = ()
    error_kind: str | None = None
    error_detail: str = ""
    bytes_read: int = 0
    duration: float = 0.0
    started_at: datetime | None = None
    address: str | None = None
    """The IP address actually connected to (the one the perimeter checked)."""
    retry_after: float | None = None
    """Clamped Retry-After seconds when the response was a throttle (429, 503 + Retry-After)."""
    wire_bytes: int = 0
    """Bytes received on the wire for the final body (before decompression); ``bytes_read``
    counts the decoded bytes."""

    @property
    def ok(self) -> bool:
        return self.error_kind is None and self.status is not None and 200 <= self.status < 300

    @property
    def not_modified(self) -> bool:
        return self.error_kind is None and self.status == 304

    @property
    def throttled(self) -> bool:
        """429, or 503 with a Retry-After: a schedule instruction, never a feed error."""
        if self.status == 429:
            return True
        return self.status == 503 and "retry-after" in self.headers
