"""A result's feed columns, decided again on the row the store holds when it writes them.

A crawl result is decided on the feed's row as the crawler read it. Another process may write
the same feed while the request is out (a WebSub ping's re-fetch in `run` beside cron's
`crawl --once`): written as decided, the later result undoes the earlier one (two failures,
``error_count`` 1; a failure after another process's success, counted as the eleventh). The
store therefore compares the row's ``crawl_count`` with the one the decision read and, if they
differ, asks this record for the columns again on the row as it now is, in the write's own
transaction. Pure: no I/O, and picklable (the write may happen in a writer process).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from fairfetch.crawl.fetch_reading import feed_state
from fairfetch.crawl.health import Decision, HealthPolicy, Outcome, decide
from fairfetch.net.politeness_keys import politeness_key
from fairfetch.store import FeedRecord

__all__ = ["Redecision", "feed_changes"]


def feed_changes(
    feed: FeedRecord,
    decision: Decision,
    extra: Mapping[str, Any],
    duplicate_of: int | None,
) -> dict[str, Any]:
    """The feed columns a decision writes: its own, the feed's descriptive columns as the
    fetch found them (after a success only), and what follows from those."""
    changes = dict(decision.changes)
    if duplicate_of is not None:
        changes["duplicate_of"] = duplicate_of
    if decision.outcome in ("ok", "not_modified"):
        changes.update(extra)
        if feed.status == "dead":
            # Revived (a success): it duplicates nothing any more.
            changes["duplicate_of"] = None
        if "url" in changes:
            # The backend this fetch named, else the one the feed is known to be on: ``extra``
            # names it only when it changed, and a platform's feed moving to its custom domain
            # stays on the platform's servers (a key of its own there was a second budget).
            backend = extra.get("backend") or feed.backend
            changes["politeness_key"] = politeness_key(changes["url"], backend)
    return changes


@dataclass(frozen=True)
class Redecision:
    """What a result's columns were decided from (``Redecider`` of store/records.py)."""

    outcome: Outcome
    at: datetime
    policy: HealthPolicy
    extra: Mapping[str, Any] = field(default_factory=dict)
    duplicate_of: int | None = None

    def changes(self, feed: FeedRecord) -> dict[str, Any]:
        decision = decide(feed_state(feed), self.outcome, self.at, self.policy)
        return feed_changes(feed, decision, self.extra, self.duplicate_of)
