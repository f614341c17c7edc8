"""Lease arithmetic (§5.3): when a granted lease ends, and when to renew it.

Pure. Renewal is scheduled at half the lease with jitter, so thousands of subscriptions made in
one burst (an import) do not all renew in the same second, and a failed renewal still has the
other half of the lease to be retried before the subscription lapses. The jitter is bounded so
the renewal always falls strictly inside the lease.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta

__all__ = ["JITTER", "MAX_LEASE", "MIN_LEASE", "expires_at", "granted", "renew_at",
           "retry_delay"]

#: ± fraction of the half-lease.
JITTER = 0.1
#: Leases shorter than this are treated as this long for scheduling (a hub granting 1 s would
#: otherwise have us re-subscribing in a tight loop) — expiry included: a renewal at half of
#: this, after a 1 s lease had already lapsed, found the subscription expired each time and made
#: its feed due at once, a poll of the publisher every half minute.
MIN_LEASE = 60.0
#: A granted lease longer than this is taken as this long: a hub's "10**12 seconds" must neither
#: overflow a date (nor PostgreSQL's integer column) nor keep us from ever renewing — hubs forget
#: subscriptions, and renewing early is always allowed.
MAX_LEASE = 365 * 24 * 3600


def granted(raw: str | None) -> int | None:
    """The hub's ``hub.lease_seconds`` as we keep it: None when absent or not a positive whole
    number (the requested lease stands), at most :data:`MAX_LEASE`."""
    try:
        value = int(raw) if raw is not None else None
    except ValueError:
        return None
    if value is None or value <= 0:
        return None
    return min(value, MAX_LEASE)


def expires_at(verified_at: datetime, lease_seconds: float) -> datetime:
    """When we take the lease to end: the grant, held to at least :data:`MIN_LEASE`."""
    return verified_at + timedelta(seconds=max(float(lease_seconds), MIN_LEASE))


def renew_at(
    verified_at: datetime, lease_seconds: float, rng: random.Random | None = None
) -> datetime:
    """Half the lease, ± JITTER of that half."""
    r = rng or random
    half = max(float(lease_seconds), MIN_LEASE) / 2.0
    return verified_at + timedelta(seconds=half * (1.0 + r.uniform(-JITTER, JITTER)))


def retry_delay(attempts: int, *, base: float = 60.0, cap: float = 6 * 3600.0,
                rng: random.Random | None = None) -> float:
    """Seconds before another try after ``attempts`` consecutive failures (full-jitter backoff)."""
    r = rng or random
    ceiling = min(cap, base * (2 ** max(0, min(attempts, 30))))
    return max(base / 2, r.uniform(0, ceiling))
