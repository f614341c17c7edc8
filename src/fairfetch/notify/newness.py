"""What counts as a *new* entry for notifications: the republish guard and identity keys.

A feed that republishes old items (a CMS migration, a platform that re-emits its archive, a hub
that pings for years-old videos — the FeedMail incident) must not mail them again as news. An entry
is stored as new by the store whenever its id is new; here we decide whether it is *news*.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from urllib.parse import urlsplit, urlunsplit

__all__ = ["NewnessLimits", "identity_variants", "is_news"]


@dataclass(frozen=True)
class NewnessLimits:
    """Configurable limits of the republish guard.

    ``behind_newest``: an entry published more than this before the feed's newest entry is an old
    item republished. ``max_age``: an entry published more than this before the feed's previous
    read (or, on a first read, before it was first seen) is old, whatever the feed's newest says
    (a feed that republishes its whole archive at once moves its "newest" too). ``None`` turns a
    limit off.
    """

    behind_newest: timedelta | None = timedelta(days=7)
    max_age: timedelta | None = timedelta(days=14)


DEFAULT_LIMITS = NewnessLimits()


def is_news(
    published: datetime | None,
    *,
    feed_newest: datetime | None,
    seen_at: datetime,
    last_read: datetime | None = None,
    limits: NewnessLimits = DEFAULT_LIMITS,
) -> bool:
    """True when an entry first seen at ``seen_at`` should be notified.

    Undated entries are news (their first sighting is all we know). Dates in the future are news.
    ``last_read``: the feed's previous successful read. The age limit counts from there: an item
    published while we could not read the feed (our outage, not theirs) is news however long ago
    that was, and ``feed_newest`` should be the newest entry stored before this read.
    """
    if published is None:
        return True
    since = seen_at if last_read is None else min(seen_at, last_read)
    if limits.max_age is not None and published < since - limits.max_age:
        return False
    if feed_newest is not None and feed_newest > seen_at:
        # one entry dated ahead (an event, a typo) must not make every real new item look
        # republished until that date: "newest" is measured from now at the latest
        feed_newest = seen_at
    return not (
        limits.behind_newest is not None
        and feed_newest is not None
        and published < feed_newest - limits.behind_newest
    )


def identity_variants(entry_id: str) -> list[str]:
    """Spellings of the same entry id that a feed produces when it moves (http→https, www., a
    trailing slash). The first item is the id itself. Non-URL ids have only themselves."""
    out = [entry_id]
    try:
        parts = urlsplit(entry_id)
    except ValueError:
        return out
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        return out
    host = parts.netloc.lower()
    bare = host[4:] if host.startswith("www.") else host
    path = parts.path or "/"
    paths = {path, path.rstrip("/") or "/", (path if path.endswith("/") else path + "/")}
    for scheme in ("https", "http"):
        for h in (bare, "www." + bare):
            for p in sorted(paths):
                v = urlunsplit((scheme, h, p, parts.query, ""))
                if v not in out:
                    out.append(v)
    return out
