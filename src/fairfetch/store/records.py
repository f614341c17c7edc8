"""Values that cross the store boundary: what the store returns and what the crawler writes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from fairfetch.feeds.model import Contact, Entry, Person
from fairfetch.net.outcome import Hop

#: The largest id a row can have (a signed 64-bit integer in both databases).
MAX_ID = 2**63 - 1


def feed_key(raw: str | int) -> str | int:
    """A feed named by a person: its id when ``raw`` is one (ASCII digits, in range), else
    the URL. ``str.isdigit`` also accepts ``²``, which ``int`` refuses, and the databases
    refuse ints past 64 bits: either ended in a traceback or a 500 wherever ids are typed."""
    if isinstance(raw, int):
        return raw
    if raw.isascii() and raw.isdigit() and 0 < int(raw) <= MAX_ID:
        return int(raw)
    return raw


@dataclass(frozen=True)
class FeedRecord:
    """One row of ``feeds`` (the health columns exactly as DESIGN.md names them)."""

    id: int
    url: str
    original_url: str
    politeness_key: str
    status: str
    error_count: int
    added_at: datetime
    title: str | None = None
    link: str | None = None
    description: str | None = None
    language: str | None = None
    image_url: str | None = None
    generator: str | None = None
    format: str | None = None
    kind: str | None = None
    kind_evidence: list[str] = field(default_factory=list)
    categories: list[str] = field(default_factory=list)
    backend: str | None = None
    last_error: str | None = None
    last_success_at: datetime | None = None
    last_fetched_at: datetime | None = None
    next_crawl_at: datetime | None = None
    etag: str | None = None
    last_modified: str | None = None
    interval_seconds: float | None = None
    redirect_candidate: str | None = None
    redirect_candidate_count: int = 0
    hub_urls: list[str] = field(default_factory=list)
    self_url: str | None = None
    entry_count: int = 0
    newest_entry_at: datetime | None = None
    crawl_count: int = 0

    @classmethod
    def from_row(cls, row: Mapping[Any, Any]) -> FeedRecord:
        names = cls.__dataclass_fields__
        return cls(**{k: v for k, v in row.items() if k in names})


@dataclass(frozen=True)
class CrawlWrite:
    """Everything one crawl attempt writes, applied in one transaction.

    ``feed_changes`` holds only the feed columns this outcome changes: a throttle carries
    ``{"next_crawl_at": …}`` and nothing else, so the store cannot touch a health column the
    decision did not name.
    """

    feed_id: int
    url: str
    at: datetime
    outcome: str
    politeness_key: str
    feed_changes: Mapping[str, Any]
    http_status: int | None = None
    error_kind: str | None = None
    error_detail: str | None = None
    bytes: int = 0
    duration: float = 0.0
    trigger: str = "poll"
    entries: Sequence[Entry] | None = None
    hops: Sequence[Hop] | None = None
    authors: Sequence[tuple[Person, str]] | None = None
    contacts: Sequence[Contact] | None = None
    #: The first successful crawl of a feed records its backlog without notifying anyone.
    first_crawl: bool = False
    #: The feed's ``crawl_count`` in the row ``feed_changes`` were decided on. When the row
    #: holds another by the time this is written (another process wrote the feed meanwhile),
    #: the columns are decided again by ``redecide`` on the row as it is; without one (or
    #: without this), they are written as they are.
    read_crawl_count: int | None = None
    redecide: Redecider | None = None


class Redecider(Protocol):
    """Decides a result's feed columns again on a newer row (crawl/redecide.py). The store
    calls it inside the write's transaction, holding the feed's row: pure, and picklable."""

    def changes(self, feed: FeedRecord) -> Mapping[str, Any]: ...


@dataclass(frozen=True)
class WriteResult:
    feed_id: int
    new_entries: int
    moved_to: str | None = None
