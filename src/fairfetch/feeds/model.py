"""The feed model of the public contract (DESIGN.md, *Python API*).

Frozen dataclasses: a parsed feed is a value, compared and hashed like one, never mutated by the
code that stores it. Times are aware UTC datetimes or None.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

__all__ = ["Contact", "Enclosure", "Entry", "Feed", "Person"]


@dataclass(frozen=True)
class Person:
    name: str | None = None
    email: str | None = None
    url: str | None = None


@dataclass(frozen=True)
class Contact:
    """A way to reach the publisher, with the element it was found in (``source``).

    ``source`` is never empty: provenance is what makes a contact worth keeping (a mailbox from
    ``itunes:owner`` is a stronger claim than one from ``webMaster``), and the store's not-null
    column must never be handed a missing value.
    """

    url: str
    network: str = "email"
    source: str = "unknown"


@dataclass(frozen=True)
class Enclosure:
    url: str
    type: str | None = None
    length: int | None = None


@dataclass(frozen=True)
class Entry:
    id: str
    title: str | None = None
    link: str | None = None
    published: datetime | None = None
    updated: datetime | None = None
    summary: str | None = None
    content: str | None = None
    authors: list[Person] = field(default_factory=list)
    categories: list[str] = field(default_factory=list)
    enclosures: list[Enclosure] = field(default_factory=list)
    image_url: str | None = None
    # Optional additions (feeds engineer); defaults keep the contract's constructor calls valid.
    #: ``media:content`` / ``media:group`` items (kept apart from RSS/Atom enclosures).
    media: list[Enclosure] = field(default_factory=list)
    #: ``itunes:duration`` (or JSON Feed ``duration_in_seconds``) in seconds.
    duration: float | None = None
    #: ``podcast:transcript`` links.
    transcripts: list[Enclosure] = field(default_factory=list)


@dataclass(frozen=True)
class Feed:
    format: str | None = None
    title: str | None = None
    link: str | None = None
    description: str | None = None
    language: str | None = None
    image_url: str | None = None
    generator: str | None = None
    authors: list[Person] = field(default_factory=list)
    contacts: list[Contact] = field(default_factory=list)
    categories: list[str] = field(default_factory=list)
    hub_urls: list[str] = field(default_factory=list)
    self_url: str | None = None
    kind: str = "blog"
    kind_evidence: list[str] = field(default_factory=list)
    entries: list[Entry] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    ok: bool = False
    #: Publisher hints for the schedule, in seconds (``<ttl>``, ``sy:updatePeriod``,
    #: ``podcast:updateFrequency``); None when the feed gives none.
    ttl_hint: float | None = None
    #: ``itunes:new-feed-url``: the publisher says the feed has moved.
    new_feed_url: str | None = None
    # Optional additions (feeds engineer).
    #: ``lastBuildDate`` / ``pubDate`` / ``atom:updated`` of the feed itself.
    updated: datetime | None = None
    #: ``atom:link rel="next"`` (RFC 5005 paging) or JSON Feed ``next_url``.
    next_url: str | None = None
    #: The encoding the bytes were read as (after overruling a wrong declaration).
    encoding: str | None = None
    #: Podcasting 2.0: ``podcast:guid``, ``podcast:locked`` (True = do not import elsewhere),
    #: ``podcast:medium``, ``podcast:funding`` URLs.
    podcast_guid: str | None = None
    locked: bool | None = None
    medium: str | None = None
    funding_urls: list[str] = field(default_factory=list)
