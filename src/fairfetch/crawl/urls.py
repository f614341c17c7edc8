"""URL checks for what users give us (feeds add, OPML): a clear error naming the bad input."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from fairfetch.errors import InvalidURLError


def normalize_feed_url(raw: str) -> str:
    """Validate and lightly normalise a URL a user gave; raises InvalidURLError naming it.

    Only http and https are crawlable. The host is lower-cased and the fragment dropped (it is
    never sent to the server); nothing else is touched, since servers differ on what else matters.
    """
    text = (raw or "").strip()
    if not text:
        raise InvalidURLError(raw, "empty URL")
    if "://" not in text and not text.startswith("//"):
        text = "https://" + text if "." in text.split("/")[0] else text
    try:
        parts = urlsplit(text)
        port = parts.port  # raises ValueError on a bad port
    except ValueError as exc:
        raise InvalidURLError(raw, f"not a URL ({exc})") from None
    if parts.scheme.lower() not in ("http", "https"):
        raise InvalidURLError(
            raw, f"unsupported scheme {parts.scheme or '(none)'!r}: use http or https"
        )
    host = (parts.hostname or "").rstrip(".")
    if not host:
        raise InvalidURLError(raw, "no host")
    if any(c.isspace() for c in text):
        raise InvalidURLError(raw, "contains whitespace")
    netloc = host.lower()
    if ":" in netloc:  # IPv6 literal
        netloc = f"[{netloc}]"
    if parts.username or parts.password:
        raise InvalidURLError(raw, "credentials in URLs are not supported")
    if port is not None:
        netloc += f":{port}"
    return urlunsplit((parts.scheme.lower(), netloc, parts.path or "/", parts.query, ""))
