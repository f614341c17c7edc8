"""fairfetch.feeds: bytes to the feed model; pure functions, no I/O.

``parse_feed`` loads on first use, so that importing the model (``fairfetch.feeds.model``) does
not load the parser and its dependencies into processes that never parse.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fairfetch.feeds.parse import parse_feed


def __getattr__(name: str) -> Any:
    if name == "parse_feed":
        from fairfetch.feeds.parse import parse_feed

        return parse_feed
    raise AttributeError(f"module 'fairfetch.feeds' has no attribute {name!r}")


__all__ = ["parse_feed"]
