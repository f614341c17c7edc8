"""The feed crawler: pure health decisions (``health``) and the loop that applies them.

The loop's names are imported lazily so that the pure modules stay importable (and cheap) on
their own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fairfetch._lazy import lazy_getattr
from fairfetch.crawl.health import Decision, FeedState, HealthPolicy, Outcome, decide

if TYPE_CHECKING:
    from fairfetch.crawl.loop import (
        AddReport,
        Crawler,
        CrawlSummary,
        FeedResult,
        add_feeds,
        utcnow,
    )

__getattr__ = lazy_getattr(
    "fairfetch.crawl",
    dict.fromkeys(
        ("AddReport", "Crawler", "CrawlSummary", "FeedResult", "add_feeds", "utcnow"),
        "fairfetch.crawl.loop",
    ),
)


__all__ = [
    "AddReport",
    "CrawlSummary",
    "Crawler",
    "Decision",
    "FeedResult",
    "FeedState",
    "HealthPolicy",
    "Outcome",
    "add_feeds",
    "decide",
    "utcnow",
]
