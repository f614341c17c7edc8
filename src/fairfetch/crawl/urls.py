"""URL checks for what users give us (feeds add, OPML): a clear error naming the bad input."""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

from yarl import URL

from fairfetch.errors import InvalidURLError
from fairfetch.net.politeness_keys import has_known_tld
from fairfetch.store.types import INDEX_TEXT_BYTES

#: A feed's URL is a unique key of the store: PostgreSQL refuses an index row past ~2,700
#: bytes, so a longer URL failed the add (or the batch) with a database error, where SQLite
#: took it. Browsers and servers stop near 2,000 as well (many CDNs at 8 KB, but not all).
MAX_URL_BYTES = INDEX_TEXT_BYTES

_SURROGATE = re.compile("[\ud800-\udfff]")
_DEFAULT_PORTS = {"http": 80, "https": 443}


def _is_control(c: str) -> bool:
    """C0 controls and DEL, except whitespace (which has its own, clearer error below)."""
    return (c < " " or c == "\x7f") and not c.isspace()


def normalize_feed_url(raw: str) -> str:
    """Validate and lightly normalise a URL a user gave; raises InvalidURLError naming it.

    Only http and https are crawlable. The host is lower-cased (an international one spelt in
    IDNA, as it is sent) and the fragment dropped (it is never sent to the server); nothing else
    is touched, since servers differ on what else matters.
    """
    text = (raw or "").strip()
    if not text:
        raise InvalidURLError(raw, "empty URL")
    # Refused here, naming the input, rather than failing in the store or the fetcher: a byte
    # that is not UTF-8 on the command line arrives as a lone surrogate (surrogateescape).
    if _SURROGATE.search(text):
        raise InvalidURLError(raw, "not valid UTF-8 text (percent-encode raw bytes: %FF)")
    control = next((c for c in text if _is_control(c)), None)
    if control is not None:
        raise InvalidURLError(raw, f"control character {control!r} in the URL")
    guessed_scheme = "://" not in text and not text.startswith("//")
    if guessed_scheme:
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
    if guessed_scheme and not has_known_tld(host):
        # "feed.xml" (an OPML's relative xmlUrl) was read as the host feed.xml and crawled as
        # https://feed.xml/: a scheme is only guessed for a host that can exist.
        raise InvalidURLError(
            raw,
            f"no scheme, and {host!r} is not a host name ({host.rpartition('.')[2]!r} is no "
            "top-level domain): give the full http(s):// URL",
        )
    netloc = host.lower()
    if ":" in netloc:  # IPv6 literal
        netloc = f"[{netloc}]"
    if parts.username or parts.password:
        raise InvalidURLError(raw, "credentials in URLs are not supported")
    scheme = parts.scheme.lower()
    if port is not None and port != _DEFAULT_PORTS[scheme]:
        # The scheme's own port is no part of the address: "http://x:80/f" and "http://x/f"
        # were two feeds of one URL, crawled twice.
        netloc += f":{port}"
    url = urlunsplit((scheme, netloc, parts.path or "/", parts.query, ""))
    try:
        parsed = URL(url)  # what the fetcher will parse: refuse here what it would refuse
    except (ValueError, UnicodeError) as exc:
        raise InvalidURLError(raw, f"not a valid host name ({exc})") from None
    ascii_host = parsed.raw_host or ""
    if not host.isascii() and ascii_host:
        # One spelling per host, the one the fetcher sends (IDNA): "bücher.test" and
        # "xn--bcher-kva.test" were two feeds, crawled twice.
        url = url.replace(f"//{host.lower()}", f"//{ascii_host}", 1)
    size = len(url.encode())
    if size > MAX_URL_BYTES:
        raise InvalidURLError(
            raw if len(raw) <= 120 else raw[:100] + "…",
            f"{size:,} bytes long: at most {MAX_URL_BYTES:,} are stored",
        )
    return url
