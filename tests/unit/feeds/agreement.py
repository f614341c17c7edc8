"""Field-by-field comparison of parse_feed with feedparser (and fastfeedparser, for the bench).

Each parser's result is reduced to the same plain view: feed title and link, and per entry the
fields every parser models (title, link, id, published, updated, authors, enclosures,
categories). Two views are compared field by field; a field counts when either side has a value.
Shared by test_feeds_agreement.py and bench/parse.py so the figure is computed one way.
"""

from __future__ import annotations

import calendar
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from fairfetch.feeds.model import Feed

ENTRY_FIELDS = ("title", "link", "id", "published", "updated", "authors", "enclosures",
                "categories")
FEED_FIELDS = ("title", "link")

View = dict[str, Any]


def _ts(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, time.struct_time):
        return calendar.timegm(value)
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        return int(value.timestamp())
    if isinstance(value, str):
        try:
            dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
        return _ts(dt)
    return None


def _s(value: Any) -> str | None:
    if value is None:
        return None
    value = str(value).strip()
    return value or None


def _length(value: Any) -> int | None:
    try:
        return int(value) if value not in (None, "") else None
    except (TypeError, ValueError):
        return None


def ours(feed: Feed) -> View:
    return {
        "feed": {"title": feed.title, "link": feed.link},
        "entries": [
            {
                "title": e.title,
                "link": e.link,
                "id": e.id,
                "published": _ts(e.published),
                "updated": _ts(e.updated),
                "authors": sorted({(a.name, a.email) for a in e.authors}, key=str),
                "enclosures": sorted({(x.url, x.type, x.length) for x in e.enclosures}, key=str),
                "categories": sorted(set(e.categories)),
            }
            for e in feed.entries
        ],
    }


def feedparser_view(parsed: Any) -> View:
    entries = []
    for e in parsed.entries:
        authors = set()
        for a in e.get("authors") or []:
            name, email = _s(a.get("name")), _s(a.get("email"))
            if name or email:
                authors.add((name, email))
        enclosures = {(_s(x.get("href")), _s(x.get("type")), _length(x.get("length")))
                      for x in e.get("enclosures") or [] if x.get("href")}
        entries.append({
            "title": _s(e.get("title")),
            "link": _s(e.get("link")),
            "id": _s(e.get("id")),
            "published": _ts(e.get("published_parsed")),
            # feedparser 6 answers updated_parsed with published_parsed when the entry has no
            # update date of its own; only a real one is compared.
            "updated": _ts(e.get("updated_parsed")) if dict.__contains__(e, "updated_parsed")
            else None,
            "authors": sorted(authors, key=str),
            "enclosures": sorted(enclosures, key=str),
            "categories": sorted({t.get("term").strip() for t in e.get("tags") or []
                                  if t.get("term") and t.get("term").strip()}),
        })
    feed = parsed.feed
    return {"feed": {"title": _s(feed.get("title")), "link": _s(feed.get("link"))},
            "entries": entries}


def fastfeedparser_view(parsed: Any) -> View:
    entries = []
    for e in parsed.get("entries") or []:
        authors = set()
        raw = e.get("author")
        if raw:
            from fairfetch.feeds.people import parse_person

            p = parse_person(str(raw))
            if p:
                authors.add((p.name, p.email))
        enclosures = {(_s(x.get("url") or x.get("href")), _s(x.get("type")),
                       _length(x.get("length"))) for x in e.get("enclosures") or []}
        entries.append({
            "title": _s(e.get("title")),
            "link": _s(e.get("link")),
            "id": _s(e.get("id")),
            "published": _ts(e.get("published")),
            "updated": _ts(e.get("updated")),
            "authors": sorted(authors, key=str),
            "enclosures": sorted(enclosures, key=str),
            "categories": sorted({str(t.get("term")).strip() for t in e.get("tags") or []
                                  if t.get("term")}),
        })
    feed = parsed.get("feed") or {}
    return {"feed": {"title": _s(feed.get("title")), "link": _s(feed.get("link"))},
            "entries": entries}


@dataclass(frozen=True)
class Diff:
    where: str
    field: str
    ours: Any
    theirs: Any


def derived(field: str, entry: dict[str, Any], theirs: Any) -> bool:
    """Values our model derives where the reference models nothing, by contract (DESIGN.md):
    an entry id when the feed gives none (link without its tracking parameters, else a content
    hash: ids must be non-empty and stable), and ``published`` from ``dc:date`` (RSS 1.0's only
    date; feedparser files it under updated only, which we set too). These are not
    disagreements and are counted apart."""
    if theirs is not None:
        return False
    value = entry[field]
    if field == "id":
        from fairfetch.feeds._build import untracked

        link = entry["link"]
        return value == link or (link is not None and value == untracked(link)) or str(
            value).startswith("hash:")
    if field == "published":
        return value is not None and value == entry["updated"]
    return False


def deliberate(field: str, ours_value: Any, theirs: Any, feed_title: str | None) -> str | None:
    """Why a difference is on purpose, or None. The person test (DESIGN.md, *Contacts*): a byline
    that is a role ("Editor"), a platform, a mailbox handle or the feed's own title names no
    person; the entry keeps the mailbox but not the name. feedparser keeps the name."""
    if field == "authors" and isinstance(theirs, list):
        from fairfetch.feeds.people import is_person_name

        expected = sorted({(n if is_person_name(n, feed_title, e) else None, e)
                           for n, e in theirs if is_person_name(n, feed_title, e) or e},
                          key=str)
        if expected == ours_value:
            return "person test: role, platform or mailbox names are not people"
    return None


@dataclass
class Agreement:
    agree: int = 0
    total: int = 0
    derived: int = 0
    diffs: list[Diff] | None = None
    on_purpose: int = 0

    @property
    def ratio(self) -> float:
        """Raw agreement: differences made on purpose count against us."""
        return self.agree / self.total if self.total else 1.0

    def add(self, other: Agreement) -> None:
        self.agree += other.agree
        self.total += other.total
        self.derived += other.derived
        self.on_purpose += other.on_purpose


def compare(a: View, b: View) -> Agreement:
    """Field agreement of view ``a`` against reference view ``b``."""
    agree = total = skipped = on_purpose = 0
    diffs: list[Diff] = []
    for f in FEED_FIELDS:
        x, y = a["feed"][f], b["feed"][f]
        if x is None and y is None:
            continue
        total += 1
        if x == y:
            agree += 1
        else:
            diffs.append(Diff("feed", f, x, y))
    ea, eb = a["entries"], b["entries"]
    for i in range(max(len(ea), len(eb))):
        if i >= len(ea) or i >= len(eb):
            total += len(ENTRY_FIELDS)
            diffs.append(Diff(f"entry {i}", "*", i < len(ea), i < len(eb)))
            continue
        for f in ENTRY_FIELDS:
            x, y = ea[i][f], eb[i][f]
            if x in (None, []) and y in (None, []):
                continue
            if derived(f, ea[i], y):
                skipped += 1
                continue
            total += 1
            if x == y:
                agree += 1
            elif deliberate(f, x, y, a["feed"]["title"]):
                on_purpose += 1
            else:
                diffs.append(Diff(f"entry {i}", f, x, y))
    return Agreement(agree, total, skipped, diffs, on_purpose)
