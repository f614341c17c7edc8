"""Is a page indexable, and if not, why: one pure decision shared by the crawl and the rules."""

from __future__ import annotations

import re

__all__ = ["has_noindex", "indexability", "is_html", "mime_essence"]


def mime_essence(content_type: str | None) -> str:
    """``type/subtype`` of a Content-Type, lower case ("" when none).

    A header sent twice reaches us joined by a comma ("text/html; charset=utf-8, text/html;
    charset=utf-8"): as the Fetch standard's "extract a MIME type", the last type of the list
    that parses (and is not ``*/*``) is the one a browser uses.
    """
    if not content_type:
        return ""
    if "," not in content_type:
        return content_type.split(";", 1)[0].strip().lower()
    essence = ""
    for part in content_type.split(","):
        kind, _, sub = part.split(";", 1)[0].strip().lower().partition("/")
        if kind and sub and f"{kind}/{sub}" != "*/*":
            essence = f"{kind}/{sub}"
    return essence


def is_html(content_type: str | None) -> bool:
    return mime_essence(content_type) in ("text/html", "application/xhtml+xml")


#: Directives that take a value ("max-image-preview:none"): their value is no directive.
_VALUED = frozenset({"max-snippet", "max-image-preview", "max-video-preview", "unavailable_after"})
#: The crawlers whose directives the audit obeys besides everyone's: it reads a page as Google
#: does, as the extraction keeps ``<meta name="robots">`` and ``<meta name="googlebot">``.
_OUR_AGENTS = frozenset({"googlebot"})
#: A user-agent name before a colon (a product token: no space, as a date's "03-Nov-2027 15"
#: after an ``unavailable_after`` value's comma has).
_AGENT = re.compile(r"[a-z0-9_.-]+")


def has_noindex(directives: str | None) -> bool:
    """True when robots directives (meta or X-Robots-Tag) forbid indexing to Google.

    X-Robots-Tag may name the crawler its directives are for ("otherbot: noindex, nofollow",
    Google's own example): the name applies to the directives after it until another is
    named, and directives before any name are for every crawler. Only everyone's and
    googlebot's count here: another crawler's noindex does not keep the page out of search.
    Two X-Robots-Tag headers reach us a line each (the fetch engine keeps them apart): a name
    in one does not reach the other.
    ``none`` forbids indexing as a directive, not as the value of one: Google's
    ``max-image-preview:none`` only withholds large image previews.
    """
    if not directives:
        return False
    for header in directives.lower().split("\n"):
        ours = True  # no agent named yet in this header: for every crawler
        for part in header.replace(";", ",").split(","):
            words = [w.strip() for w in part.split(":")]
            if len(words) > 1 and words[0] not in _VALUED:
                if _AGENT.fullmatch(words[0]) is None:
                    continue  # not "agent: directive" (a date's time after its comma)
                ours = words[0] in _OUR_AGENTS  # a user-agent prefix: "googlebot: noindex"
                words = words[1:]
            if ours and words[0] in ("noindex", "none"):
                return True
    return False


def indexability(
    *,
    url: str,
    status: int | None,
    error: str | None,
    content_type: str | None,
    meta_robots: str | None,
    x_robots_tag: str | None,
    canonical: str | None,
    error_detail: str = "",
) -> tuple[bool, str]:
    """(indexable, reason). The first reason in this order wins, as a search engine would see it."""
    if error == "robots":
        return False, "blocked by robots.txt"
    if status is None:
        return False, f"no response ({error or 'unknown'})"
    if 300 <= status < 400:
        return False, f"redirect {status}"
    if 400 <= status < 500:
        return False, f"client error {status}"
    if status >= 500:
        return False, f"server error {status}"
    if status != 200:
        return False, f"status {status}"
    if error:
        # It answered 200, but its body could not be read (a coding we never asked for, a
        # stream cut short, over the size cap): nothing anyone could index.
        return False, f"body not readable ({error}: {error_detail})" if error_detail else (
            f"body not readable ({error})"
        )
    if not is_html(content_type):
        return False, "not HTML"
    if has_noindex(x_robots_tag):
        return False, "noindex (X-Robots-Tag)"
    if has_noindex(meta_robots):
        return False, "noindex (meta robots)"
    if canonical and canonical != url:
        return False, "canonicalised elsewhere"
    return True, "indexable"
