"""WebSub figures for ``/crawlstats`` and ``feeds show`` (read-only; called by the web and CLI).

``websub_stats`` counts what the callback did with each ping since a time, so an outage like
FeedMail's (nearly every ping "ignored") shows up as a number that is plainly wrong, not as
silence: every ping lands in exactly one bucket, and ``received`` is their sum.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from fairfetch.store import SqlStore
from fairfetch.store import websub_repo as repo

__all__ = ["websub_stats", "websub_summary"]

#: Buckets of the ping log (websub_pings.outcome), in the order /crawlstats shows them.
BUCKETS = ("accepted", "rejected", "ignored", "retried", "gone", "unknown")


def websub_stats(store: SqlStore, since: datetime) -> dict[str, Any]:
    """Pings received since ``since`` and what became of them, plus queue and lease states.

    ``accepted``: processed (queued for re-fetch, or answered 2xx after a re-fetch);
    ``rejected``: bad signature, unknown algorithm, unsigned or a body over the cap — the
    payload was not processed;
    ``ignored``: named entries too old (point 6), or deletions; ``retried``: answered non-2xx so
    the hub tries again; ``gone``: for a subscription we are leaving (410); ``unknown``: no such
    callback (404).
    """
    counts = repo.ping_counts(store, since)
    out: dict[str, Any] = {"since": since, "received": sum(counts.values())}
    for bucket in BUCKETS:
        out[bucket] = int(counts.get(bucket, 0))
    other = {k: v for k, v in counts.items() if k not in BUCKETS}
    if other:  # a bucket this code does not know is a bug: show it rather than drop it
        out["other"] = other
    out["rejected_by_reason"] = repo.rejected_reasons(store, since)
    out["queue"] = repo.delivery_counts(store)
    out["subscriptions"] = repo.subscription_state_counts(store)
    return out


def websub_summary(store: SqlStore, feed_id: int) -> dict[str, Any] | None:
    """The feed's WebSub subscription for ``feeds show``; None when it never had one."""
    sub = repo.latest_for_feed(store, feed_id)
    if sub is None:
        return None
    return {
        "hub": sub.hub_url,
        "topic": sub.topic_url,
        "state": sub.state,
        "lease_seconds": sub.lease_seconds,
        "lease_expires_at": sub.lease_expires_at,
        "verified_at": sub.verified_at,
        "next_action_at": sub.next_action_at,
        "denied_reason": sub.denied_reason,
        "last_error": sub.last_error,
        "subscribed_since": sub.created_at,
    }
