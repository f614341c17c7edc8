"""fairfetch.feeds: bytes to the feed model; pure functions, no I/O.

``parse_feed`` loads on first use, so that importing the model (``fairfetch.feeds.model``) does
not load the parser and its dependencies into processes that never parse.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fairfetch._lazy import lazy_getattr

if TYPE_CHECKING:
    from fairfetch.feeds.parse import parse_feed


__getattr__ = lazy_getattr("fairfetch.feeds", {"parse_feed": "fairfetch.feeds.parse"})


__all__ = ["parse_feed"]
