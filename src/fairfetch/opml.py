"""OPML import and export: the lingua franca of feed readers.

Parsing is defensive (lxml, no entities, no network), and each outline is judged on its own: one
bad ``xmlUrl`` is reported and the others still count.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from lxml import etree

from fairfetch.errors import InputError
from fairfetch.feeds._encoding import repair_references, strip_doctype, to_utf8
from fairfetch.web.safety import web_base


@dataclass(frozen=True)
class Outline:
    url: str
    title: str | None = None
    category: str | None = None


def parse_opml(data: bytes, *, name: str = "OPML file") -> list[Outline]:
    """Every outline with an ``xmlUrl``, in document order (duplicates removed). One whose
    ``xmlUrl`` is there but empty comes back with ``url=""``: a bad entry to report, where a
    folder (no ``xmlUrl`` at all) is no entry. See :func:`read_opml` for what was lost."""
    return read_opml(data, name=name)[0]


#: Errors reported for one file at most: a file broken throughout says so in a screenful.
MAX_PROBLEMS = 20


def read_opml(data: bytes, *, name: str = "OPML file") -> tuple[list[Outline], list[str]]:
    """The outlines of :func:`parse_opml`, and one ``"line N: what"`` per error the parser
    recovered from. Recovery keeps what it can read, but an outline it could not (an unquoted
    attribute, a tag cut off, nesting past the parser's depth) is gone, or reads as a folder:
    without these lines the feed would be dropped without a word."""
    # Read as a feed is read (BOM, declaration, else UTF-8, else Windows-1252): an old tool's
    # undeclared Latin-1 file came out with U+FFFD in its URLs and titles.
    data, _, _ = to_utf8(data, None)
    # libxml2 expands internal entities in attribute values whatever the parser options say,
    # and an outline is all attributes: no DTD, no entities (a billion laughs in a title).
    lines_before = data.count(b"\n")
    data, _ = strip_doctype(data)
    # The DOCTYPE's lines are gone: the parser's line numbers are put back to the file's.
    shift = lines_before - data.count(b"\n")
    # Hand-made files carry a query string's bare '&' and HTML entities (&eacute;): recovery
    # would read '?a=1&b=2' as '?a=1=2', another URL, and cut 'Caf&eacute;' to 'Caf'.
    data = repair_references(data)
    parser = etree.XMLParser(
        resolve_entities=False, no_network=True, recover=True, huge_tree=False,
        load_dtd=False,
        encoding="utf-8",  # the bytes are made UTF-8 first, whatever their declaration says
    )
    try:
        root = etree.fromstring(data, parser)
    except etree.XMLSyntaxError as exc:
        raise InputError(name, f"not an OPML document ({exc})") from None
    if root is None or etree.QName(root).localname.lower() != "opml":
        raise InputError(name, "not an OPML document (no <opml> root)")
    seen: set[str] = set()
    out: list[Outline] = []
    for el in root.iter("{*}outline", "outline"):
        declared = el.get("xmlUrl", el.get("xmlurl"))
        url = (declared or el.get("url") or "").strip()
        if not url and declared is None:
            continue  # a folder, or an outline that names no feed
        if url and url in seen:
            continue
        seen.add(url)
        parent = el.getparent()
        category = parent.get("text") if parent is not None and parent.tag == "outline" else None
        out.append(Outline(url, el.get("title") or el.get("text"), category))
    problems: list[str] = []
    for entry in parser.error_log:
        if entry.level < etree.ErrorLevels.ERROR or entry.domain == etree.ErrorDomains.NAMESPACE:
            continue  # an undeclared prefix (itunes:type) loses nothing: the outline is whole
        problem = f"line {entry.line + shift}: {entry.message.strip()}"
        if problem not in problems:
            problems.append(problem)
    if len(problems) > MAX_PROBLEMS:
        more = len(problems) - MAX_PROBLEMS
        problems = [*problems[:MAX_PROBLEMS], f"and {more} more error(s)"]
    return out, problems


#: What XML 1.0 cannot hold: C0 controls but tab and line ends, surrogates, U+FFFE and U+FFFF.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _xml_safe(text: str) -> str:
    return _NOT_XML.sub("", text)


def build_opml(
    feeds: Iterable[tuple[str, str | None, str | None]], *, title: str = "fairfetch"
) -> bytes:
    """(url, title, html_url) triples to an OPML 2.0 document. Characters XML cannot hold are
    dropped from every value: one odd stored title must not fail the whole export. A site that
    is not an http(s) address is left out."""
    root = etree.Element("opml", version="2.0")
    head = etree.SubElement(root, "head")
    etree.SubElement(head, "title").text = title
    body = etree.SubElement(root, "body")
    for url, raw_title, raw_html_url in feeds:
        url = _xml_safe(url)
        feed_title = _xml_safe(raw_title) if raw_title else None
        # Readers show htmlUrl as a link, and a feed's <link> may be javascript: or data::
        # named only when it is a web address, as the directory's /feeds.opml does.
        site = web_base(raw_html_url)
        html_url = _xml_safe(site) if site else None
        attrs = {"type": "rss", "text": feed_title or url, "xmlUrl": url}
        if feed_title:
            attrs["title"] = feed_title
        if html_url:
            attrs["htmlUrl"] = html_url
        etree.SubElement(body, "outline", attrs)
    return bytes(etree.tostring(root, xml_declaration=True, encoding="UTF-8", pretty_print=True))
