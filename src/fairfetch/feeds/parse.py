"""``parse_feed``: bytes in, ``Feed`` out, for every format we crawl. Pure and total.

Pure: no I/O, no clock, no network (the XML parser resolves no entities and loads no DTD).
Total: it never raises on any input. What it had to recover from is listed in ``Feed.problems``
and ``Feed.ok`` is False only when nothing feed-like was found; a crawler must be able to record
"not a feed" as data, and one hostile document must not stop a crawl.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping

from lxml import etree

from fairfetch.feeds._atom import read_atom
from fairfetch.feeds._build import FeedBuilder
from fairfetch.feeds._encoding import fix_char_refs, repair_references, strip_doctype, to_utf8
from fairfetch.feeds._jsonfeed import json_version, read_json
from fairfetch.feeds._rss import read_rss
from fairfetch.feeds._xml import (
    NS_ATOM03,
    NS_RSS090,
    key_of,
    lift_bodies,
    lifted,
    make_parser,
    unlift,
)
from fairfetch.feeds.discover import hub_and_self_from_link_header, looks_like_html
from fairfetch.feeds.model import Feed

__all__ = ["parse_feed"]

_RSS_VERSIONS = {"0.91": "rss091", "0.92": "rss092", "0.93": "rss092", "0.94": "rss092",
                 "2.0": "rss20", "2.0.1": "rss20", "2": "rss20", "2.00": "rss20",
                 "0.90": "rss090", "0.9": "rss090", "1.0": "rss10"}
# libxml2 errors that repair_references fixes: undeclared entity, entity ref without name,
# entity ref without semicolon.
_REFERENCE_ERRORS = frozenset({26, 68, 23})
# libxml2 errors that mean the bytes are not what the fast path assumed: invalid char (9),
# invalid char value (? in PCDATA, 9/83), encoding errors (81, 82), unsupported encoding (32).
_ENCODING_ERRORS = frozenset({9, 32, 81, 82, 83})


def parse_feed(
    data: bytes, url: str | None = None, headers: Mapping[str, str] | None = None
) -> Feed:
    """Parse a feed document fetched from ``url`` (the final URL, after redirects) with the
    response ``headers``. Never raises."""
    try:
        return _parse(data, url, headers)
    except Exception as exc:  # a bug of ours must not become a crawl failure loop
        return Feed(problems=[f"internal parser error: {type(exc).__name__}: {exc}"[:300]],
                    ok=False)
    except RecursionError:  # pragma: no cover - Exception already covers it; kept explicit
        return Feed(problems=["document nested too deeply"], ok=False)


def _not_a_feed(reason: str, problems: list[str] | None = None) -> Feed:
    return Feed(problems=[*(problems or []), reason], ok=False)


def _header(headers: Mapping[str, str] | None, name: str) -> str | None:
    if not headers:
        return None
    for k, v in headers.items():
        if k.lower() == name:
            return v
    return None


def _parse(data: bytes, url: str | None, headers: Mapping[str, str] | None) -> Feed:
    if isinstance(data, str):
        data = data.encode("utf-8")
    elif isinstance(data, bytearray | memoryview):
        data = bytes(data)
    elif not isinstance(data, bytes):
        return _not_a_feed("not a feed: no bytes")
    stripped = data.lstrip(b" \t\r\n\xef\xbb\xbf")
    if not stripped:
        return _not_a_feed("not a feed: empty document")
    if stripped[:1] in (b"{", b"["):
        return _parse_json(data, url, headers)
    return _parse_xml(data, url, headers)


def _parse_json(data: bytes, url: str | None, headers: Mapping[str, str] | None) -> Feed:
    try:
        doc = json.loads(data.decode("utf-8-sig", errors="replace"))
    except (ValueError, RecursionError):
        return _not_a_feed("not a feed: invalid JSON")
    version = json_version(doc)
    problems: list[str] = []
    if version is None:
        if isinstance(doc, dict) and isinstance(doc.get("items"), list) and "title" in doc:
            version = "json10"
            problems.append("JSON Feed without a version")
        else:
            return _not_a_feed("not a feed: JSON but not a JSON Feed")
    fb = FeedBuilder(version, url, headers, url)
    fb.encoding = "utf-8"
    fb.problems.extend(problems)
    read_json(doc, fb)
    _link_header(fb, headers, url)
    return fb.finish()


def _detect(root: etree._Element) -> tuple[str | None, str | None]:
    """(format, problem) from the root element."""
    tag = root.tag if isinstance(root.tag, str) else ""
    key = key_of(tag)
    local = key.rpartition(":")[2].lower()
    if local == "rss":
        version = (root.get("version") or "").strip()
        fmt = _RSS_VERSIONS.get(version)
        if fmt is None:
            return "rss20", f"unknown RSS version {version[:20]!r}, read as 2.0"
        return fmt, None
    if key == "rdf:RDF" or local == "rdf":
        for el in root:
            if isinstance(el.tag, str) and el.tag.startswith("{" + NS_RSS090 + "}"):
                return "rss090", None
        return "rss10", None
    if local == "feed":
        if tag.startswith("{" + NS_ATOM03 + "}"):
            return "atom03", None
        if key == "atom:feed":
            return "atom10", None
        return "atom10", "Atom feed without the Atom namespace"
    if local == "channel":
        return "rss092", "channel without rss root"
    return None, None


_THREAD = threading.local()


def _parser() -> etree.XMLParser:
    """This thread's parser: building one costs more than a small feed's parse. lxml clears
    a parser's error log at the start of each parse, and a parser is never shared between
    threads (lxml would serialise them on its lock)."""
    parser: etree.XMLParser | None = getattr(_THREAD, "parser", None)
    if parser is None:
        parser = _THREAD.parser = make_parser()
    return parser


def _parse_tree(utf8: bytes) -> tuple[etree._Element | None, list[etree._LogEntry]]:
    parser = _parser()
    try:
        root = etree.fromstring(utf8, parser)
    except etree.XMLSyntaxError:
        root = None
    return root, [e for e in parser.error_log if e.level >= etree.ErrorLevels.ERROR]


def _parse_xml(data: bytes, url: str | None, headers: Mapping[str, str] | None) -> Feed:
    # Fast path: trust a UTF-8 claim and let libxml2 validate while it parses (one pass).
    # Only when it reports bad bytes or forbidden characters is the document examined closely.
    utf8, encoding, problems = to_utf8(data, headers, trust_utf8=True)
    utf8, had_entities = strip_doctype(utf8)
    sections: dict[str, str] = {}
    if encoding == "utf-8" and not had_entities:
        lifted_bytes, sections = lift_bodies(utf8)
        if sections:
            root, errors = _parse_tree(lifted_bytes)
            if errors:  # anything odd: parse the document whole, as it came
                sections = {}
    if not sections:
        root, errors = _parse_tree(utf8)
    slow = False
    if any(e.type in _ENCODING_ERRORS for e in errors):
        utf8, encoding, problems = to_utf8(data, headers)
        utf8, had_entities = strip_doctype(utf8)
        utf8, fixed_refs = fix_char_refs(utf8)
        if fixed_refs:
            problems.append("character references to surrogates or past U+10FFFF replaced")
        root, errors = _parse_tree(utf8)
        slow = True
    if had_entities:
        problems.append("DTD entity declarations ignored")
    if any(e.type in _REFERENCE_ERRORS for e in errors):
        fixed = repair_references(utf8)
        if fixed != utf8:
            utf8 = fixed
            root, errors = _parse_tree(fixed)
            problems.append("undefined entities or bare ampersands repaired")
    if root is None:
        if looks_like_html(data):
            return _not_a_feed("not a feed", [*problems, "HTML document"])
        return _not_a_feed("not a feed: unparseable XML", problems)
    fmt, problem = _detect(root)
    if fmt is None:
        if looks_like_html(data) or key_of(root.tag if isinstance(root.tag, str) else "").lower(
                ).endswith("html"):
            return _not_a_feed("not a feed", [*problems, "HTML document"])
        return _not_a_feed(f"not a feed: root element {str(root.tag)[:60]!r}", problems)
    if problem:
        problems.append(problem)
    if errors:
        first = errors[0]
        problems.append(
            f"malformed XML recovered ({len(errors)} error(s); first at line {first.line}: "
            f"{first.message.strip()[:80]})")
    # the readers apply the root's xml:base themselves: applied here too, a relative one
    # ("blog/") was resolved twice (…/blog/blog/post.html)
    fb = FeedBuilder(fmt, url, headers, url)
    fb.encoding = encoding
    fb.problems.extend(problems)
    token = lifted(sections or None)
    try:
        _read(fmt, root, fb)
    except UnicodeDecodeError:
        if not slow:
            raise
        # A reference to a surrogate that fix_char_refs left alone as CDATA, comment or PI
        # text was read by libxml2 as character data (its recovery parsed the markup
        # otherwise: a "<![CDATA[" in an attribute value): replace them all and read again.
        root, _ = _parse_tree(fix_char_refs(utf8, everywhere=True)[0])
        if root is None:
            return _not_a_feed("not a feed: unparseable XML", problems)
        fb = FeedBuilder(fmt, url, headers, url)
        fb.encoding = encoding
        fb.problems.extend(problems)
        _read(fmt, root, fb)
    finally:
        unlift(token)
    _link_header(fb, headers, url)
    return fb.finish()


def _read(fmt: str, root: etree._Element, fb: FeedBuilder) -> None:
    if fmt.startswith("atom"):
        read_atom(root, fb)
    else:
        read_rss(root, fb)


def _link_header(fb: FeedBuilder, headers: Mapping[str, str] | None, url: str | None) -> None:
    """WebSub discovery: the Link header speaks for the URL that was fetched, so its hubs come
    first and its self link wins over the document's."""
    link = _header(headers, "link")
    if not link:
        return
    hubs, self_url = hub_and_self_from_link_header(link, url)
    if hubs:
        fb.hub_urls = hubs + [h for h in fb.hub_urls if h not in hubs]
    if self_url:
        fb.self_url = self_url
