"""fairfetch.feeds: bytes to the feed model; pure functions, no I/O."""

from fairfetch.feeds.parse import parse_feed

__all__ = ["parse_feed"]
