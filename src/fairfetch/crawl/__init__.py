"""The feed crawler: pure health decisions (``health``) and the loop that applies them.

The loop's names are imported lazily so that the pure modules stay importable (and cheap) on
their own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fairfetch._lazy import lazy_getattr
from fairfetch.crawl.health import Decision, FeedState, HealthPolicy, Outcome, decide

if TYPE_CHECKING:
    from fairfetch.crawl.loop import Crawler, add_feeds
    from fairfetch.crawl.results import AddReport, CrawlSummary, FeedResult, utcnow

__getattr__ = lazy_getattr(
    "fairfetch.crawl",
    {
        **dict.fromkeys(("Crawler", "add_feeds"), "fairfetch.crawl.loop"),
        **dict.fromkeys(
            ("AddReport", "CrawlSummary", "FeedResult", "utcnow"), "fairfetch.crawl.results"
        ),
    },
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
