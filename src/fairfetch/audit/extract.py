"""HTML → the facts an audit needs about one page. Pure: bytes in, a plain object out.

Everything a rule may ask about a page is extracted here once, while the parsed tree is in hand,
so the rules never re-parse HTML and the crawl file holds everything the workbook shows.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from selectolax.lexbor import LexborCSSSelector, LexborHTMLParser, LexborNode

from fairfetch.audit.encoding import html_as_utf8
from fairfetch.audit.sketch import SKETCH_SIZE, _sketch, sketch_similarity
from fairfetch.audit.urls import origin_of, resolve_link

__all__ = [
    "SKETCH_SIZE", "Asset", "Link", "PageFacts", "extract_page", "parse_refresh",
    "sketch_similarity",
]

#: Regions a link can sit in; the first that contains it wins (nav inside header is "nav").
_REGIONS = ("nav", "header", "footer", "aside")
#: Tags whose absence lets extract_page skip a query (lower-cased bytes, as the regex finds).
_OPTIONAL_TAGS = frozenset(
    {b"base", b"video", b"audio", b"source", b"nav", b"header", b"footer", b"aside", b"main",
     b"iframe"}
)
_OPTIONAL_TAGS_RE = re.compile(
    rb"<(" + b"|".join(sorted(_OPTIONAL_TAGS)) + rb")\b"
)
#: Not part of a page's text (its own words): scripts, styles and the page's chrome.
_NOT_TEXT = "script, style, noscript, nav, header, footer, template"
_HEADINGS = "h1, h2, h3, h4, h5, h6"

_selectors = threading.local()


def _css(query: str, node: LexborNode) -> list[LexborNode]:
    """``node.css(query)`` with one CSS engine per thread instead of one per page.

    selectolax creates a selector engine (CSS parser, selector lists, matcher) for each parsed
    document on its first query, ~8 µs a page: most of the cost of a small page's two
    queries. The engine holds no document (each query is given its node), so one serves every
    page; one per thread, as it keeps the query in progress."""
    engine = getattr(_selectors, "engine", None)
    if engine is None:
        engine = _selectors.engine = LexborCSSSelector()
    return engine.find(query, node)


class Link(NamedTuple):
    """A named tuple, not a frozen dataclass: ~20 are built per page, at a third of the cost."""

    url: str
    anchor: str
    rel: str
    where: str  # nav | header | footer | aside | content | head
    kind: str = "a"  # a | canonical-head | hreflang | ...


_new_tuple = tuple.__new__


class Asset(NamedTuple):
    url: str
    kind: str  # image | js | css | font | media | icon | srcset | iframe
    alt: str | None = None
    width: str | None = None
    height: str | None = None


@dataclass(slots=True)
class PageFacts:
    titles: list[str] = field(default_factory=list)
    title_outside_head: bool = False
    descriptions: list[str] = field(default_factory=list)
    description_outside_head: bool = False
    h1s: list[str] = field(default_factory=list)
    heading_levels: list[int] = field(default_factory=list)
    canonicals: list[str] = field(default_factory=list)
    meta_robots: str = ""
    hreflang: list[tuple[str, str]] = field(default_factory=list)
    lang: str = ""
    word_count: int = 0
    links: list[Link] = field(default_factory=list)
    assets: list[Asset] = field(default_factory=list)
    og_title: str = ""
    og_image: str = ""
    #: a non-empty <meta http-equiv="Content-Security-Policy"> in <head> (enforced like the header)
    csp_meta: bool = False
    jsonld_total: int = 0
    jsonld_invalid: int = 0
    content_hash: str = ""
    sketch: str = ""
    #: links not followed nor checked, by reason (``mailto``, ``javascript``, ``invalid`` …)
    skipped: dict[str, int] = field(default_factory=dict)
    #: where the first ``<meta http-equiv="refresh">`` sends the browser, and after how many
    #: seconds (None: no refresh, or one that reloads the page itself)
    refresh: str | None = None
    refresh_delay: int | None = None


_SPACE = " \t\n\r\f"


def srcset_urls(value: str) -> list[str]:
    """The candidate URLs of a ``srcset``, split as the HTML standard does: a URL runs to the
    next whitespace (commas inside it are kept: ``w_100,h_100`` image-CDN paths), a trailing
    comma ends it, and its descriptors run to a comma outside parentheses."""
    out: list[str] = []
    i, n = 0, len(value)
    while i < n:
        while i < n and (value[i] in _SPACE or value[i] == ","):
            i += 1
        start = i
        while i < n and value[i] not in _SPACE:
            i += 1
        url = value[start:i]
        if url.endswith(","):
            url = url.rstrip(",")
        else:
            depth = 0
            while i < n:
                c = value[i]
                if c == "(":
                    depth += 1
                elif c == ")" and depth:
                    depth -= 1
                elif c == "," and not depth:
                    break
                i += 1
        if url:
            out.append(url)
    return out


#: HTML's white space (ASCII only): what browsers collapse in a title or a link's text.
_HTML_SPACE = re.compile(r"[ \t\n\f\r]+")


def _squash(text: str) -> str:
    """Runs of HTML white space as one space. An ideographic space (U+3000) or a no-break space
    is text, kept as written: browsers show it, and it is a full em of a CJK title's width."""
    if text.isascii():
        return " ".join(text.split())
    return _HTML_SPACE.sub(" ", text).strip(" ")


_REFRESH_TIME = re.compile(r"[ \t\n\f\r]*([0-9]*)(\.[0-9.]*)?")
_REFRESH_URL = re.compile(
    r"[ \t\n\f\r]*[;,]?[ \t\n\f\r]*(?:url[ \t\n\f\r]*=[ \t\n\f\r]*)?", re.IGNORECASE
)


def parse_refresh(content: str) -> tuple[int, str | None] | None:
    """(seconds, URL as written or None) of a refresh's ``content``, parsed as the HTML
    Standard's shared declarative refresh steps do; None when it is no refresh (no time)."""
    m = _REFRESH_TIME.match(content)
    if m is None or not (m.group(1) or m.group(2)):
        return None
    delay = int(m.group(1) or 0)
    rest = content[m.end():]
    u = _REFRESH_URL.match(rest)
    url = rest[u.end():] if u else rest
    if url[:1] in ("'", '"'):
        quote, url = url[0], url[1:]
        end = url.find(quote)
        url = url if end < 0 else url[:end]
    url = url.strip(" \t\n\f\r")
    return delay, url or None


def _text(node: object) -> str:
    return _squash(node.text(separator=" ", strip=True))  # type: ignore[attr-defined]


def _in_svg_or_math(node: Any) -> bool:
    """SVG and MathML have a <title> of their own (lexbor names it "title" too)."""
    parent = node.parent
    while parent is not None:
        tag = parent.tag
        if tag in ("svg", "math"):
            return True
        if tag in ("head", "body", "html"):
            return False
        parent = parent.parent
    return False


def extract_page(body: bytes, url: str, content_type: str | None = None) -> PageFacts:
    """Parse one HTML page, in the encoding a browser would read it in (``content_type``: the
    HTTP header, whose charset comes before the page's own). Never raises on bad markup
    (lexbor recovers like a browser)."""
    facts = PageFacts()
    body = html_as_utf8(body, content_type)
    tree = LexborHTMLParser(body)
    root = tree.root
    if root is None:
        return facts
    facts.lang = (root.attributes.get("lang") or "").strip()
    base = url
    # One regex pass over the raw bytes names the optional tags the page has (~4 µs; a CSS
    # query walks the whole tree, and each `in` test costs 1.6 µs on 3 KB), so queries for
    # elements most pages lack run only when the tag occurs at all. Huge pages: query all.
    present = (
        set(_OPTIONAL_TAGS_RE.findall(body.lower())) if len(body) < 2_000_000 else _OPTIONAL_TAGS
    )
    base_nodes = _css("head base[href]", root) if b"base" in present else []
    base_node = base_nodes[0] if base_nodes else None
    if base_node is not None:
        resolved = resolve_link(url, base_node.attributes.get("href") or "")
        if resolved:
            base = resolved
    origin = origin_of(base)

    # tree.tags() reads lexbor's tag index: several times cheaper than a CSS query walking
    # the whole tree, and in document order too.
    for node in tree.tags("title"):
        if _in_svg_or_math(node):
            continue  # an inline icon's accessible name, not the page's title
        facts.titles.append(_text(node))
        parent = node.parent
        if parent is None or parent.tag != "head":
            facts.title_outside_head = True

    robots_parts: list[str] = []
    refreshes: tuple[int, str | None] | None = None
    for node in tree.tags("meta"):
        attrs = node.attributes
        name = (attrs.get("name") or "").strip().lower()
        prop = (attrs.get("property") or "").strip().lower()
        content = (attrs.get("content") or "").strip()
        if name == "description":
            # As the snippet shows it (a template's line breaks and indentation are one space).
            facts.descriptions.append(_squash(content))
            parent = node.parent
            if parent is None or parent.tag != "head":
                facts.description_outside_head = True
        elif name in ("robots", "googlebot"):
            robots_parts.append(content.lower())
        elif prop == "og:title":
            facts.og_title = content
        elif prop == "og:image":
            facts.og_image = content
        elif content and "http-equiv" in attrs:
            equiv = (attrs.get("http-equiv") or "").strip().lower()
            if equiv == "content-security-policy":
                if node.parent is not None and node.parent.tag == "head":
                    facts.csp_meta = True
            elif equiv == "refresh" and refreshes is None:
                refreshes = parse_refresh(content)
    facts.meta_robots = ", ".join(p for p in robots_parts if p)
    if refreshes is not None and refreshes[1] is not None:
        # Browsers follow the first refresh only; one back to the page itself reloads it.
        target = resolve_link(base, refreshes[1], origin)
        if target is not None and target != url:
            facts.refresh, facts.refresh_delay = target, refreshes[0]

    for node in tree.tags("link"):
        attrs = node.attributes
        if "href" not in attrs:
            continue
        rel = (attrs.get("rel") or "").strip().lower()
        href = attrs.get("href") or ""
        target = resolve_link(base, href, origin)
        if target is None:
            continue
        rels = set(rel.split())
        if "canonical" in rels:
            facts.canonicals.append(target)
        elif "alternate" in rels and attrs.get("hreflang"):
            facts.hreflang.append(((attrs.get("hreflang") or "").strip().lower(), target))
        elif "stylesheet" in rels:
            facts.assets.append(Asset(target, "css"))
        elif "icon" in rels:
            facts.assets.append(Asset(target, "icon"))
        elif "preload" in rels or "prefetch" in rels:
            as_ = (attrs.get("as") or "").lower()
            kind = {"font": "font", "script": "js", "style": "css", "image": "image"}.get(
                as_, "media"
            )
            if kind == "image":
                facts.assets.append(Asset(target, "image"))
            else:
                facts.assets.append(Asset(target, kind))

    for node in tree.tags("script"):
        attrs = node.attributes
        src = attrs.get("src")
        if src:
            target = resolve_link(base, src, origin)
            if target:
                facts.assets.append(Asset(target, "js"))
        elif (attrs.get("type") or "").strip().lower() == "application/ld+json":
            facts.jsonld_total += 1
            try:
                json.loads(node.text() or "")
            except ValueError:
                facts.jsonld_invalid += 1

    # Responsive variants are resources of type "srcset", not images: the <img> keeps its one
    # Images row, so alt and dimension findings are not multiplied by its variants.
    variants: list[str] = []
    for node in tree.tags("img"):
        attrs = node.attributes
        target = resolve_link(base, attrs.get("src") or "", origin)
        if target:
            facts.assets.append(
                Asset(target, "image", attrs.get("alt"), attrs.get("width"), attrs.get("height"))
            )
        srcset = attrs.get("srcset")
        if srcset:
            variants.extend(srcset_urls(srcset))
    media = (
        _css("video[src], audio[src], source[src], source[srcset]", root)
        if b"video" in present or b"audio" in present or b"source" in present
        else []
    )
    for node in media:
        attrs = node.attributes
        src = attrs.get("src")
        if src:
            target = resolve_link(base, src, origin)
            if target:
                facts.assets.append(Asset(target, "media"))
        srcset = attrs.get("srcset")
        if srcset:  # <picture><source srcset>
            variants.extend(srcset_urls(srcset))
    for href in variants:
        target = resolve_link(base, href, origin)
        if target:
            facts.assets.append(Asset(target, "srcset"))
    if b"iframe" in present:
        for node in tree.tags("iframe"):
            target = resolve_link(base, node.attributes.get("src") or "", origin)
            if target:
                facts.assets.append(Asset(target, "iframe"))

    for node in _css(_HEADINGS, root):
        level = int((node.tag or "h1")[1])
        facts.heading_levels.append(level)
        if level == 1:
            facts.h1s.append(_text(node))

    region_of: dict[int, str] = {}
    for region in _REGIONS:
        if region.encode() not in present:
            continue
        for region_node in tree.tags(region):
            # A walk of the region's own subtree, not a CSS query (which builds a selector
            # parser per call): 10 -> 4 µs a page. Every <a> is mapped; only those with an
            # href are looked up below.
            for node in region_node.traverse():
                if node.tag == "a":
                    region_of.setdefault(node.mem_id, region)
    links = facts.links
    for node in tree.tags("a"):
        attrs = node.attributes
        a_href = attrs.get("href")
        if a_href is None:
            continue
        target = resolve_link(base, a_href, origin)
        if target is None:
            stripped = a_href.strip()
            if stripped and not stripped.startswith("#"):
                scheme = stripped.split(":", 1)[0].lower() if ":" in stripped else "invalid"
                reason = scheme if scheme.isalpha() and len(scheme) < 20 else "invalid"
                facts.skipped[reason] = facts.skipped.get(reason, 0) + 1
            continue
        a_rel = attrs.get("rel")
        # tuple.__new__ skips the named tuple's Python-level __new__ (half the cost of a Link).
        links.append(
            _new_tuple(
                Link,
                (
                    target,
                    _squash(node.text(separator=" ", strip=True)),
                    a_rel.strip().lower() if a_rel else "",
                    region_of.get(node.mem_id, "content"),
                    "a",
                ),
            )
        )

    body_node = tree.body
    if body_node is not None:
        mains = _css("main", root) if b"main" in present else []
        text_root = mains[0] if mains else body_node
        # One query for every tag to drop (strip_tags runs one per tag: 12 -> 4 µs), removed
        # innermost first: reversed document order never touches a node freed with its parent.
        for node in reversed(_css(_NOT_TEXT, text_root)):
            node.decompose()
        words = text_root.text(separator=" ").split()
        facts.word_count = len(words)
        joined = " ".join(words)
        facts.sketch = _sketch(joined.lower()) if words else ""
        facts.content_hash = hashlib.blake2b(joined.encode(), digest_size=8).hexdigest()
    return facts
