"""What a crawl reports: one :class:`FeedResult` a feed, the :class:`CrawlSummary` that
accounts for every due feed, and what ``feeds add`` did with each URL (:class:`AddReport`)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from fairfetch.errors import FairfetchError

__all__ = ["AccountingError", "AddReport", "CrawlSummary", "FeedResult", "utcnow"]


def utcnow() -> datetime:
    return datetime.now(UTC)


class AccountingError(FairfetchError):
    """A due feed ended in no bucket: a bug, and loud on purpose (DESIGN.md: failures are loud)."""


@dataclass(frozen=True)
class FeedResult:
    feed_id: int
    url: str
    outcome: str
    new_entries: int = 0
    entry_ids: frozenset[str] = frozenset()
    error_kind: str | None = None
    http_status: int | None = None


@dataclass
class CrawlSummary:
    due: int = 0
    counts: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    skipped: Counter[str] = field(default_factory=Counter)
    new_entries: int = 0
    results: list[FeedResult] = field(default_factory=list)
    elapsed: float = 0.0
    outage: bool = False

    @property
    def accounted(self) -> int:
        return sum(self.counts.values()) + sum(self.skipped.values())

    def as_dict(self) -> dict[str, Any]:
        return {
            "due": self.due,
            "ok": self.counts["ok"],
            "not_modified": self.counts["not_modified"],
            "throttled": self.counts["throttled"],
            "failed": self.counts["error"],
            "outage": self.counts["outage"],
            "errors": dict(self.errors),
            "skipped": dict(self.skipped),
            "new_entries": self.new_entries,
            "elapsed_seconds": round(self.elapsed, 3),
        }


@dataclass
class AddReport:
    added: list[str] = field(default_factory=list)
    existing: list[str] = field(default_factory=list)
    discovered: dict[str, list[str]] = field(default_factory=dict)
    invalid: list[tuple[str, str]] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
