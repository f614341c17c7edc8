"""Is the topic a hub names the topic we subscribed to? (pure)

We subscribe to the ``rel=self`` URL exactly as the publisher wrote it, but the hub answers with
its own spelling: WebSub §5.1.1 says hubs MUST decode non-reserved characters (``%7E`` comes
back as ``~``), hubs that take IRIs percent-encode the rest (``é`` as ``%C3%A9``), and hex digits
come in either case. Compared byte for byte, a verification of our own subscription got 404 and
the subscription stayed pending for ever. Two spellings are the same topic when RFC 3986's
syntax-based normalisation (§6.2.2.1–2: scheme and host case, percent-encoding case, unreserved
characters decoded) of their URI forms (RFC 3987 §3.1: non-ASCII, and what a URI cannot hold
as itself, as UTF-8 percent-encoded) agree. Nothing else is equated: a reserved character and
its escape (``/`` and ``%2F``) differ, and so do path case, trailing slashes and extra
parameters.
"""

from __future__ import annotations

import re
import string
from urllib.parse import urlsplit, urlunsplit

__all__ = ["same_topic", "topic_key"]

_UNRESERVED = frozenset(string.ascii_letters + string.digits + "-._~")
#: what may stand in a URI as itself: unreserved, reserved (RFC 3986 §2.2), and escapes
_AS_IS = _UNRESERVED | frozenset(":/?#[]@!$&'()*+,;=%")
_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")


def _escape_char(ch: str) -> str:
    if ch in _AS_IS:
        return ch
    return "".join(f"%{b:02X}" for b in ch.encode("utf-8", "surrogatepass"))


def _fix_escape(m: re.Match[str]) -> str:
    ch = chr(int(m.group(1), 16))
    return ch if ch in _UNRESERVED else "%" + m.group(1).upper()


def topic_key(url: str) -> str:
    """The normal form two spellings of one topic share."""
    text = _ESCAPE.sub(_fix_escape, "".join(_escape_char(ch) for ch in url))
    try:
        parts = urlsplit(text)
    except ValueError:
        return text
    netloc = parts.netloc
    userinfo, at, hostport = netloc.rpartition("@")
    netloc = userinfo + at + hostport.lower()
    return urlunsplit((parts.scheme.lower(), netloc, parts.path, parts.query, parts.fragment))


def same_topic(ours: str, theirs: str) -> bool:
    return ours == theirs or topic_key(ours) == topic_key(theirs)
