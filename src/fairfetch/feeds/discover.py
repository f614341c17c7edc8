"""Finding feeds and WebSub endpoints: in a site's HTML, in Link headers, in the feed itself.

Pure: these return candidate URLs; the crawler does the fetching (only ``net/`` talks to the web).
"""

from __future__ import annotations

import re
from urllib.parse import urljoin, urlsplit

from selectolax.lexbor import LexborHTMLParser as HTMLParser

from fairfetch.net.link_header import parse_link_header

__all__ = [
    "FEED_TYPES",
    "WELL_KNOWN_PATHS",
    "declared_feed_links",
    "find_feed_links",
    "guessed_feed_urls",
    "hub_and_self_from_link_header",
    "looks_like_html",
]

FEED_TYPES = frozenset({
    "application/rss+xml", "application/atom+xml", "application/rdf+xml",
    "application/feed+json", "application/json", "application/x.atom+xml",
    "application/x-atom+xml", "application/x-rss+xml", "text/xml", "application/xml",
    "application/rss", "text/rss+xml",
})

#: Tried, in this order, only when the page declares no feed.
WELL_KNOWN_PATHS: tuple[str, ...] = (
    "/feed", "/rss", "/feed.xml", "/rss.xml", "/atom.xml", "/index.xml", "/feed.json",
    "/feed/", "/rss/", "/?feed=rss2",
)

_HTML_START = re.compile(
    rb"^(?:\s|<!--.*?-->|<\?xml[^>]*>)*<(?:!doctype\s+html|html|head|body|meta|title|script|div"
    rb"|p|a|table|link|style|br)[\s>/]",
    re.IGNORECASE | re.DOTALL,
)
_FEED_ROOT = re.compile(rb"<(?:[\w.\-]+:)?(?:rss|feed|RDF|channel)[\s>]")


def looks_like_html(data: bytes) -> bool:
    """Whether a body is an HTML page (a site, a login wall, an error page) rather than a feed.

    Only the start of the document is looked at: the root decides, and a feed whose entries
    embed HTML is still a feed.
    """
    head = data[:2048]
    if head.startswith(b"\xef\xbb\xbf"):
        head = head[3:]
    if b"\x00" in head[:64]:  # UTF-16: narrow it for the sniff
        head = head.replace(b"\x00", b"")
    head = head.lstrip()
    if not head:
        return False
    m = _HTML_START.match(head)
    if not m:
        return False
    # "<?xml ...?><rss" never reaches here; "<?xml ...?><html" does and is HTML.
    return not _FEED_ROOT.match(head, m.start(), m.end() + 1)


def find_feed_links(html: bytes, base_url: str) -> list[str]:
    """Feed URLs a page declares with ``<link rel="alternate" type="…">`` (document order,
    resolved against ``<base href>`` and ``base_url``); when it declares none, the well-known
    paths of its site as candidates."""
    return declared_feed_links(html, base_url) or guessed_feed_urls(base_url)


def guessed_feed_urls(base_url: str) -> list[str]:
    """The well-known feed paths of a site: candidates to try, not feeds (fetch to confirm)."""
    parts = urlsplit(base_url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return []
    root = f"{parts.scheme}://{parts.netloc}"
    return [u for u in (root + path for path in WELL_KNOWN_PATHS) if u != base_url]


def declared_feed_links(html: bytes, base_url: str) -> list[str]:
    """Only the feeds the page itself declares (no guesses)."""
    try:
        tree = HTMLParser(html)
    except Exception:
        tree = None
    base = base_url
    # An ordered set: a list's `in` made a page of 20,000 feed links cost 2 s of CPU in the
    # event loop of `run` (a stranger's page, given to `feeds add`).
    found: dict[str, None] = {}
    if tree is not None:
        base_el = tree.css_first("base[href]")
        if base_el is not None:
            href = (base_el.attributes.get("href") or "").strip()
            if href:
                base = _join(base_url, href) or base_url
        for node in tree.css("link[rel][href]"):
            attrs = node.attributes
            rels = (attrs.get("rel") or "").lower().split()
            ctype = (attrs.get("type") or "").split(";", 1)[0].strip().lower()
            if "alternate" not in rels and "feed" not in rels:
                continue
            if ctype not in FEED_TYPES and not ("feed" in rels and not ctype):
                continue
            if ctype == "application/json" and "alternate" in rels and "feed" not in rels:
                # oEmbed and REST APIs also use application/json (every WordPress page names
                # its /wp-json/ resource so, titled "JSON"); JSON Feed says feed+json, or its
                # title or URL names a feed
                title = (attrs.get("title") or "").lower()
                try:
                    path = urlsplit((attrs.get("href") or "").strip().lower()).path
                except ValueError:
                    continue
                if "feed" not in title and "feed" not in path.replace("wp-json", ""):
                    continue
            url = _join(base, (attrs.get("href") or "").strip())
            if url and url not in found and urlsplit(url).scheme in ("http", "https"):
                found[url] = None
    return [u for u in found if u != base_url]


# Pseudo-schemes that hand a feed's URL to a reader or podcast app: the feed is the URL inside
# ("feed:https://host/rss") or the same address over http ("feed://host/rss", "itpc://...").
_FEED_SCHEME = re.compile(r"^(?:feed|itpc|pcast|podcast):(?://)?", re.IGNORECASE)


def _unwrap_feed_scheme(href: str) -> str:
    m = _FEED_SCHEME.match(href)
    if m is None:
        return href
    rest = href[m.end():]
    if rest[:7].lower() == "http://" or rest[:8].lower() == "https://":
        return rest
    if m.group(0).endswith("//") and rest:
        return "http://" + rest
    return ""  # feed:javascript:..., an empty address: nothing to fetch


def _join(base: str, href: str) -> str | None:
    href = _unwrap_feed_scheme(href)
    if not href:
        return None
    try:
        return urljoin(base, href)
    except ValueError:
        return None


def hub_and_self_from_link_header(value: str, base_url: str | None = None) -> tuple[
        list[str], str | None]:
    """WebSub ``rel="hub"`` URLs and the ``rel="self"`` URL from an HTTP Link header value
    (RFC 8288: several links, several rel values per link, quoted or bare)."""
    hubs: list[str] = []
    self_url: str | None = None
    for link in parse_link_header(value):
        target = link.target
        if base_url and target:
            target = _join(base_url, target) or target
        if not target:
            continue
        if "hub" in link.rels and target not in hubs:
            hubs.append(target)
        if "self" in link.rels and self_url is None:
            self_url = target
    return hubs, self_url
