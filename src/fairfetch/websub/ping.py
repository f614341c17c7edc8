"""What to answer a hub that pings about named entries (YouTube style) — issue 5, point 6.

Pure: no I/O, no clock of its own. FeedMail's outage (seeds/003) came from exactly this filter
written the wrong way round: nearly every ping was "too old" and ignored. So the rules live here,
alone, with tests in both directions for each branch:

1. an entry *published* more than ``ignore_older_than`` ago: acknowledge (2xx) and ignore it —
   hubs re-ping years-old videos on every title or description edit;
2. an entry present in the re-fetched feed: acknowledge, it is stored;
3. an entry missing from the re-fetched feed: answer non-2xx so the hub retries later (never hold
   the connection open polling) — unless it was last *updated* more than ``give_up_after`` ago,
   then acknowledge: the hub's retries must end somewhere.

An entry whose dates are unknown is never "too old" (we cannot prove it) and, if missing, is
retried: the hub's own retry limit bounds that case.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

__all__ = ["EntryDecision", "NamedEntry", "PingDecision", "decide_entry", "decide_ping",
           "needs_refetch"]


@dataclass(frozen=True)
class NamedEntry:
    """An entry a ping names: its id as the feed spells it and the dates the payload claims."""

    entry_id: str
    published: datetime | None = None
    updated: datetime | None = None


class EntryDecision(StrEnum):
    TOO_OLD = "too_old"      # 2xx, ignored, not even re-fetched for
    FOUND = "found"          # 2xx, the re-fetched feed has it
    GIVE_UP = "give_up"      # 2xx, missing but stale: end the hub's retries
    RETRY = "retry"          # non-2xx, missing and recent: let the hub retry


def is_too_old(entry: NamedEntry, now: datetime, ignore_older_than: float) -> bool:
    """Published strictly more than ``ignore_older_than`` seconds before ``now``."""
    if entry.published is None:
        return False
    return now - entry.published > timedelta(seconds=ignore_older_than)


def decide_entry(
    entry: NamedEntry,
    present: frozenset[str] | None,
    now: datetime,
    *,
    ignore_older_than: float,
    give_up_after: float,
) -> EntryDecision:
    """``present``: ids in the re-fetched feed; None when the re-fetch failed or was not made."""
    if is_too_old(entry, now, ignore_older_than):
        return EntryDecision.TOO_OLD
    if present is not None and entry.entry_id in present:
        return EntryDecision.FOUND
    last_change = entry.updated or entry.published
    if last_change is not None and now - last_change > timedelta(seconds=give_up_after):
        return EntryDecision.GIVE_UP
    return EntryDecision.RETRY


def needs_refetch(
    entries: Iterable[NamedEntry], now: datetime, *, ignore_older_than: float
) -> bool:
    """A ping whose every entry is too old is answered at once, without touching the publisher."""
    return any(not is_too_old(e, now, ignore_older_than) for e in entries)


@dataclass(frozen=True)
class PingDecision:
    per_entry: tuple[tuple[str, EntryDecision], ...]

    @property
    def acknowledge(self) -> bool:
        """2xx unless some entry must be retried."""
        return all(d is not EntryDecision.RETRY for _, d in self.per_entry)

    @property
    def outcome(self) -> str:
        """The crawlstats bucket: ``retried`` beats ``accepted`` beats ``ignored``."""
        kinds = {d for _, d in self.per_entry}
        if EntryDecision.RETRY in kinds:
            return "retried"
        if kinds and kinds <= {EntryDecision.TOO_OLD}:
            return "ignored"
        return "accepted"


def decide_ping(
    entries: Sequence[NamedEntry],
    present: frozenset[str] | None,
    now: datetime,
    *,
    ignore_older_than: float,
    give_up_after: float,
) -> PingDecision:
    return PingDecision(
        tuple(
            (
                e.entry_id,
                decide_entry(
                    e, present, now,
                    ignore_older_than=ignore_older_than, give_up_after=give_up_after,
                ),
            )
            for e in entries
        )
    )
