"""Feed-supplied strings are hostile: what may become a link, and what HTML may be shown.

Titles, descriptions, author names and URLs come from strangers. Jinja2 escapes every value
(autoescape is on for every template); these functions decide the two things escaping cannot:
whether a URL may be an ``href`` at all, and which parts of a feed's HTML may be rendered.
"""

from __future__ import annotations

import html
from urllib.parse import urljoin, urlsplit

import nh3

#: Schemes a rendered link may have. Everything else (javascript:, data:, vbscript:, file:, …)
#: is shown as text, never as a link.
LINK_SCHEMES = frozenset({"http", "https", "mailto"})

#: Tags kept from feed HTML. No images, media or frames: the page must not load anything from
#: the publisher's servers (privacy, and the tests must stay on loopback).
_TAGS = {
    "a",
    "abbr",
    "b",
    "blockquote",
    "br",
    "code",
    "dd",
    "del",
    "dl",
    "dt",
    "em",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "hr",
    "i",
    "ins",
    "kbd",
    "li",
    "ol",
    "p",
    "pre",
    "q",
    "s",
    "small",
    "strong",
    "sub",
    "sup",
    "table",
    "tbody",
    "td",
    "tfoot",
    "th",
    "thead",
    "tr",
    "u",
    "ul",
}
_ATTRIBUTES = {"a": {"href", "title"}, "abbr": {"title"}, "td": {"colspan"}, "th": {"colspan"}}


def safe_url(value: object) -> str | None:
    """``value`` if it may be rendered as a link (http, https, mailto with a target), else None.

    Browsers ignore ASCII whitespace and control characters inside a scheme ("java\\tscript:"),
    so any URL containing them is refused outright rather than normalised.
    """
    if not isinstance(value, str):
        return None
    text = value.strip()
    if not text or any(ord(c) < 0x21 or ord(c) == 0x7F for c in text):
        return None
    try:
        parts = urlsplit(text)
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in LINK_SCHEMES:
        return None
    if scheme in ("http", "https") and not parts.netloc:
        return None
    if scheme == "mailto" and not parts.path:
        return None
    return text


def web_base(value: object) -> str | None:
    """``value`` if relative links may be resolved against it (an http(s) URL with a host)."""
    url = safe_url(value)
    return url if url is not None and urlsplit(url).scheme.lower() in ("http", "https") else None


def _link_target(href: str, base: str | None) -> str | None:
    """Where a link of feed HTML points, seen from the publisher's page, or None.

    The HTML was written for the publisher's page: a relative link shown as it is on ours
    would point into the directory ("/p/2" to our /p/2, "?notice=deleted" to our own notice).
    It is resolved against the publisher's address, or, with none known, loses its target.
    """
    text = href.strip()
    if not text:
        return None
    if safe_url(text) is not None:
        return text
    if base is None or urlsplit(text).scheme:
        return None  # relative with nowhere to resolve it, or a scheme we never link
    try:
        joined = urljoin(base, text).replace(" ", "%20")
    except ValueError:
        return None
    return web_base(joined)


def sanitize_html(value: object, base: str | None = None) -> str:
    """Feed HTML reduced to harmless text markup: no scripts, handlers, styles or remote loads.

    ``base`` is the publisher's address the HTML was written for (the entry's link, else the
    feed's site or URL): relative links are resolved against it.
    """
    if not isinstance(value, str) or not value:
        return ""
    resolve_from = web_base(base)

    def keep(tag: str, attribute: str, attribute_value: str) -> str | None:
        if tag == "a" and attribute == "href":
            return _link_target(attribute_value, resolve_from)
        return attribute_value

    return nh3.clean(
        value,
        tags=_TAGS,
        attributes=_ATTRIBUTES,
        attribute_filter=keep,
        url_schemes=set(LINK_SCHEMES),
        link_rel="nofollow noopener noreferrer ugc",
        strip_comments=True,
    )


def plain_text(value: object, limit: int = 300) -> str:
    """Feed HTML as plain text (for one-line summaries), cut at ``limit`` characters."""
    if not isinstance(value, str) or not value:
        return ""
    text = nh3.clean(value, tags=set(), attributes={})
    # nh3 returns text with entities escaped; the template escapes again, so undo ours.
    text = " ".join(html.unescape(text).split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
