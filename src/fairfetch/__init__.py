"""fairfetch: a polite, resilient crawler for the open web's feeds and sites.

The curated public surface is re-exported here; everything else is an implementation detail
whose module may move. Importing the package is cheap: heavier names load on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fairfetch._lazy import lazy_getattr
from fairfetch.errors import (
    AuditError,
    ConfigError,
    FairfetchError,
    FeedError,
    FetchError,
    InputError,
    InvalidURLError,
    NotFoundError,
    NotifyError,
    PerimeterError,
    StoreError,
    WebSubError,
)

if TYPE_CHECKING:
    from fairfetch.config import Settings, load_settings
    from fairfetch.crawl.loop import Crawler
    from fairfetch.crawl.results import CrawlSummary
    from fairfetch.feeds.model import Contact, Enclosure, Entry, Feed, Person
    from fairfetch.feeds.parse import parse_feed
    from fairfetch.store import SqlStore, open_store

__version__ = "0.1.0"

# Settings and the feed model too: a process that needs neither (``audit report``'s rules,
# a parse worker) no longer pays ~25 ms of imports for them (tomllib, pathlib, the models).
_LAZY = {
    "Settings": "fairfetch.config",
    "load_settings": "fairfetch.config",
    "Contact": "fairfetch.feeds.model",
    "Enclosure": "fairfetch.feeds.model",
    "Entry": "fairfetch.feeds.model",
    "Feed": "fairfetch.feeds.model",
    "Person": "fairfetch.feeds.model",
    "parse_feed": "fairfetch.feeds.parse",
    "Crawler": "fairfetch.crawl.loop",
    "CrawlSummary": "fairfetch.crawl.results",
    "open_store": "fairfetch.store",
    "SqlStore": "fairfetch.store",
}


__getattr__ = lazy_getattr("fairfetch", _LAZY)


__all__ = [
    "AuditError",
    "ConfigError",
    "Contact",
    "CrawlSummary",
    "Crawler",
    "Enclosure",
    "Entry",
    "FairfetchError",
    "Feed",
    "FeedError",
    "FetchError",
    "InputError",
    "InvalidURLError",
    "NotFoundError",
    "NotifyError",
    "PerimeterError",
    "Person",
    "Settings",
    "SqlStore",
    "StoreError",
    "WebSubError",
    "__version__",
    "load_settings",
    "open_store",
    "parse_feed",
]
