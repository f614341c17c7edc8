"""A sitemap's ``<loc>`` entries, streamed: no tree, and lxml only for documents out of the way.

Why: the crawl process reads the sitemaps while it crawls the first levels. With lxml, the
module alone held ~4 MiB of that process's RSS for the whole crawl, and a 10,000-URL sitemap's
tree another ~4 MiB at the crawl's start (measured with ``bench/audit.py``'s 10,000-page site,
2026-12-01). A well-formed sitemap in UTF-8 or ASCII — what sitemaps.org asks for — is read by
the standard library's expat, streaming: only the URLs stay. Anything else goes to lxml in
recover mode as before (imported then): a parse error (lxml reads what it can of a broken
file), a DOCTYPE (entity declarations: lxml leaves them unexpanded, and expat stops before it
reads one), another encoding, nesting or a text run past what lxml reads without
``huge_tree``. So the result is lxml's for every input; expat only reads it sooner.
"""

from __future__ import annotations

import zlib
from typing import Any
from xml.parsers import expat

__all__ = ["SITEMAP_MAX_BYTES", "parse_sitemap"]

#: sitemaps.org's limit for one sitemap, uncompressed: a .xml.gz is never inflated past it.
SITEMAP_MAX_BYTES = 50 * 1024 * 1024

_EXPAT_ENCODINGS = frozenset({"utf-8", "utf8", "us-ascii", "ascii"})
#: Well inside libxml2's limits without huge_tree (depth 256, a text node of 10,000,000
#: bytes, a name of 50,000): past them, lxml decides what a document holds.
_MAX_DEPTH = 128
_MAX_TEXT = 1_000_000
_MAX_NAME = 1_000


class _ForLxml(Exception):
    """The document is one for lxml to read (see the module docstring)."""


def parse_sitemap(data: bytes) -> tuple[str | None, list[str]]:
    """(urlset | sitemapindex | None, locs) — entities and network off.

    A sitemap.xml.gz comes as gzip bytes without Content-Encoding (the fetch engine inflates
    only what the server says it encoded): inflated here, up to SITEMAP_MAX_BYTES.
    """
    if data[:2] == b"\x1f\x8b":
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            data = inflater.decompress(data, SITEMAP_MAX_BYTES + 1)
        except zlib.error:
            return None, []
        if len(data) > SITEMAP_MAX_BYTES:
            return None, []
    if data[:2] in (b"\xff\xfe", b"\xfe\xff") or data[:4] in (b"\x00\x00\xfe\xff",):
        return _with_lxml(data)  # UTF-16/32
    try:
        return _streamed(data)
    except (_ForLxml, expat.ExpatError):
        return _with_lxml(data)


def _streamed(data: bytes) -> tuple[str | None, list[str]]:
    """What lxml's tree gives (see _with_lxml), read by expat: an entry's own ``<loc>`` text
    up to its first child node (lxml's ``.text``), stripped, when not empty."""
    parser: Any = expat.ParserCreate(namespace_separator=" ")
    parser.buffer_text = True
    root: list[str] = []  # the root element's local name, once seen
    locs: list[str] = []
    depth = 0
    entry = ""  # the entries' local name, from the root's
    in_entry = False
    in_loc = False
    text: list[str] | None = None  # the <loc>'s text so far; None once a child node began
    run = 0  # characters in the current text run

    def done_text() -> None:
        # The text ends at the loc's first child node or at its end (lxml's .text).
        nonlocal text
        if text is not None:
            value = "".join(text).strip()
            if value:
                locs.append(value)
            text = None

    def start(name: str, attrs: dict[str, str]) -> None:
        nonlocal depth, entry, in_entry, in_loc, text, run
        depth += 1
        run = 0
        if depth > _MAX_DEPTH or len(name) > _MAX_NAME:
            raise _ForLxml
        if any(len(v) > _MAX_TEXT for v in attrs.values()):
            raise _ForLxml
        local = name.rpartition(" ")[2]
        if depth == 1:
            root.append(local)
            entry = {"urlset": "url", "sitemapindex": "sitemap"}.get(local, "")
        elif depth == 2:
            in_entry = bool(entry) and local == entry
        elif depth == 3 and in_entry and local == "loc":
            in_loc = True
            text = []
        elif in_loc:
            done_text()

    def end(_name: str) -> None:
        nonlocal depth, in_entry, in_loc, run
        run = 0
        if depth == 3 and in_loc:
            done_text()
            in_loc = False
        elif depth == 2:
            in_entry = False
        depth -= 1

    def chars(s: str) -> None:
        nonlocal run
        run += len(s)
        if run > _MAX_TEXT:
            raise _ForLxml
        if text is not None:
            text.append(s)

    def child_node(*_: object) -> None:
        if in_loc:
            done_text()

    def doctype(*_: object) -> None:
        raise _ForLxml

    def xml_decl(_version: str, encoding: str | None, _standalone: int) -> None:
        if encoding is not None and encoding.strip().lower() not in _EXPAT_ENCODINGS:
            raise _ForLxml

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = chars
    parser.CommentHandler = child_node
    parser.ProcessingInstructionHandler = child_node
    parser.StartDoctypeDeclHandler = doctype
    parser.XmlDeclHandler = xml_decl
    parser.Parse(data, True)
    if not root or not entry:
        return None, []
    return ("urlset" if entry == "url" else "sitemapindex"), locs


def _with_lxml(data: bytes) -> tuple[str | None, list[str]]:
    """The tree, in recover mode, entities and network off."""
    from lxml import etree

    parser = etree.XMLParser(
        resolve_entities=False, no_network=True, recover=True, huge_tree=False
    )
    try:
        root = etree.fromstring(data, parser)
    except etree.XMLSyntaxError:
        return None, []
    if root is None:
        return None, []
    tag = etree.QName(root).localname
    if tag not in ("urlset", "sitemapindex"):
        return None, []
    # An entry's own <loc> only: the image and video extensions (Yoast lists each page's
    # images as <image:image><image:loc>) name a page's files, not pages of the site.
    entry = "url" if tag == "urlset" else "sitemap"
    return tag, [
        (el.text or "").strip()
        for el in root.iterfind(f"{{*}}{entry}/{{*}}loc")
        if (el.text or "").strip()
    ]
