"""The feed crawler: pure health decisions (``health``) and the loop that applies them.

The loop's names are imported lazily so that the pure modules stay importable (and cheap) on
their own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

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

_LAZY = {"AddReport", "Crawler", "CrawlSummary", "FeedResult", "add_feeds", "utcnow"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from fairfetch.crawl import loop

        return getattr(loop, name)
    raise AttributeError(name)


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
