"""OPML 2.0 export of the directory (/feeds.opml), streamed a batch at a time."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from datetime import datetime
from email.utils import format_datetime
from xml.sax.saxutils import quoteattr

from fairfetch.store.records import FeedRecord
from fairfetch.web.safety import safe_url

#: Characters XML 1.0 cannot carry at all (feeds do ship them); dropped from attribute values.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


def _attr(value: str | None) -> str:
    return quoteattr(_NOT_XML.sub("", value or ""))


def _site_url(link: str | None) -> str | None:
    """The feed's site as OPML's htmlUrl, only if it is a web address: readers importing the
    file show htmlUrl as a link, and a feed's <link> may be javascript: or data:."""
    url = safe_url(link)
    return url if url is not None and url.lower().startswith(("http:", "https:")) else None


def opml_lines(
    feeds: Iterable[FeedRecord], *, now: datetime, title: str = "fairfetch"
) -> Iterator[str]:
    yield '<?xml version="1.0" encoding="UTF-8"?>\n<opml version="2.0">\n<head>'
    yield f"<title>{_attr(title)[1:-1]}</title><dateCreated>{format_datetime(now, usegmt=True)}"
    yield "</dateCreated></head>\n<body>\n"
    for f in feeds:
        kind = f" category={_attr('/' + f.kind)}" if f.kind else ""
        site = _site_url(f.link)
        html = f" htmlUrl={_attr(site)}" if site else ""
        text = _attr(f.title or f.url)
        yield (
            f'<outline type="rss" text={text} title={text} xmlUrl={_attr(f.url)}{html}{kind}/>\n'
        )
    yield "</body>\n</opml>\n"
