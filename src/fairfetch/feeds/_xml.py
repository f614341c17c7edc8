"""Hardened XML parsing and the namespace table.

The parser never resolves entities, loads a DTD or touches the network: a feed is untrusted input,
and a billion-laughs or external-entity feed must cost no more than its own bytes. Recover mode
keeps whatever libxml2 can salvage from malformed documents, which is most of them.

Namespaces are matched by URI, not prefix, and every known spelling of a URI (trailing slash,
``http`` vs ``https``, upper-case DTD paths) maps to one canonical prefix. Elements written with an
undeclared prefix (``<itunes:author>`` with no ``xmlns:itunes``) arrive with the literal prefix in
the tag; they are mapped the same way, because the publisher plainly meant it.
"""

from __future__ import annotations

import os
import pyexpat
import re
from contextvars import ContextVar
from itertools import accumulate

from lxml import etree

__all__ = ["XML_BASE", "inner_markup", "key_of", "lift_bodies", "lifted", "make_parser",
           "text_of", "unlift"]

XML_BASE = "{http://www.w3.org/XML/1998/namespace}base"
XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"

NS_ATOM10 = "http://www.w3.org/2005/Atom"
NS_ATOM03 = "http://purl.org/atom/ns#"
NS_RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
NS_RSS10 = "http://purl.org/rss/1.0/"
NS_RSS090 = "http://my.netscape.com/rdf/simple/0.9/"

_URI_PREFIX: dict[str, str] = {
    NS_ATOM10: "atom",
    NS_ATOM03: "atom",
    NS_RDF: "rdf",
    NS_RSS10: "",
    NS_RSS090: "",
    "http://backend.userland.com/rss2": "",
    "http://blogs.law.harvard.edu/tech/rss": "",
    "http://purl.org/rss/1.0/modules/content/": "content",
    "http://purl.org/dc/elements/1.1/": "dc",
    "http://purl.org/dc/terms/": "dcterms",
    "http://www.itunes.com/dtds/podcast-1.0.dtd": "itunes",
    "https://www.itunes.com/dtds/podcast-1.0.dtd": "itunes",
    "http://www.itunes.com/DTDs/Podcast-1.0.dtd": "itunes",
    "http://www.itunes.com/DTDs/PodCast-1.0.dtd": "itunes",
    "http://www.itunes.com/dtds/podcast-1.0.dtd/": "itunes",
    "https://podcastindex.org/namespace/1.0": "podcast",
    "http://podcastindex.org/namespace/1.0": "podcast",
    "https://github.com/Podcastindex-org/podcast-namespace/blob/main/docs/1.0.md": "podcast",
    "http://search.yahoo.com/mrss/": "media",
    "http://search.yahoo.com/mrss": "media",
    "http://video.search.yahoo.com/mrss": "media",
    "http://video.search.yahoo.com/mrss/": "media",
    "http://tools.search.yahoo.com/mrss/": "media",
    "http://www.google.com/schemas/play-podcasts/1.0": "googleplay",
    "https://www.google.com/schemas/play-podcasts/1.0": "googleplay",
    "http://purl.org/rss/1.0/modules/syndication/": "sy",
    "http://www.youtube.com/xml/schemas/2015": "yt",
    "http://www.w3.org/1999/xhtml": "xhtml",
    "http://purl.org/rss/1.0/modules/slash/": "slash",
    "http://wellformedweb.org/CommentAPI/": "wfw",
    "http://www.rssboard.org/media-rss": "media",
}

_KNOWN_PREFIXES = frozenset(
    {"atom", "content", "dc", "dcterms", "itunes", "podcast", "media", "googleplay", "sy", "yt",
     "rdf"}
)

_KEYS: dict[str, str] = {}
_XMLNS = re.compile(r'\s+xmlns(?::[\w.\-]+)?="[^"]*"')


def key_of(tag: str) -> str:
    """Canonical ``prefix:local`` (or bare ``local`` for RSS's own elements) for an lxml tag."""
    try:
        return _KEYS[tag]
    except KeyError:
        pass
    if tag[:1] == "{":
        uri, _, local = tag[1:].partition("}")
        prefix = _URI_PREFIX.get(uri)
        if prefix is None:
            prefix = _URI_PREFIX.get(uri.rstrip("/"), _URI_PREFIX.get(uri + "/"))
        if prefix is None:
            low = uri.lower()
            if "itunes.com/dtds" in low:
                prefix = "itunes"
            elif "podcastindex" in low or "podcast-namespace" in low:
                prefix = "podcast"
            elif "mrss" in low:
                prefix = "media"
            elif "atom" in low:
                prefix = "atom"
            else:
                prefix = "?"
        key = f"{prefix}:{local}" if prefix else local
    elif ":" in tag:
        prefix, _, local = tag.partition(":")
        prefix = prefix.lower()
        key = f"{prefix}:{local}" if prefix in _KNOWN_PREFIXES else f"?:{local}"
    else:
        key = tag
    if len(_KEYS) < 10_000:  # bounded: hostile feeds can invent namespaces without end
        _KEYS[tag] = key
    return key


def make_parser() -> etree.XMLParser:
    """A fresh parser: no entities, no DTD, no network, recover mode, bounded tree size."""
    return etree.XMLParser(
        recover=True,
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        dtd_validation=False,
        huge_tree=False,
        remove_comments=True,
        remove_pis=True,
        remove_blank_text=False,
        strip_cdata=True,
        collect_ids=False,
        encoding="utf-8",
    )


# Large bodies are lifted out of the document before libxml2 sees it and put back when their
# element's text is read: the parser then only walks the feed's structure. Two kinds: CDATA
# sections (RSS content:encoded, descriptions) and long runs of escaped character data (Atom
# content type="html"). libxml2 reads non-ASCII character data and CDATA one character at a
# time (~200 MB/s); decoding a lifted CDATA body is one C call, and the escaped runs of a
# document are unescaped and decoded together by expat (see _runs_text).
_MARK_START = "\ue000"
_MARK_END = "\ue001"
_LIFT_MIN = 1024
_LIFTED: ContextVar[dict[str, str] | None] = ContextVar("fairfetch_lifted_cdata", default=None)
_MARK_RE = re.compile(_MARK_START + r"[0-9a-f]+:\d+" + _MARK_END)


_FORBIDDEN = bytes([*range(0, 9), 11, 12, *range(14, 32)])  # C0 controls XML forbids
# &amp; last (see _named_refs): what it yields must not be read again.
_NAMED_BUT_AMP = ((b"&lt;", b"<"), (b"&gt;", b">"), (b"&quot;", b'"'), (b"&apos;", b"'"))
_FORBIDDEN_EACH = tuple(bytes([b]) for b in _FORBIDDEN)
_NUMREF = re.compile(rb"&#(?:([0-9]{1,7})|x([0-9a-fA-F]{1,6}));")
_AMP_HELD = b"\xff"  # never in valid UTF-8: holds "&" from &#38; while named refs are replaced


def _numref(m: re.Match[bytes]) -> bytes:
    n = int(m.group(1)) if m.group(1) is not None else int(m.group(2), 16)
    if not (n in (9, 10, 13) or 0x20 <= n <= 0xD7FF or 0xE000 <= n <= 0xFFFD
            or 0x10000 <= n <= 0x10FFFF):
        raise ValueError(n)  # libxml2 reports it: not ours to read
    return _AMP_HELD if n == 38 else chr(n).encode("utf-8")


def _clean(raw: bytes) -> bool:
    """No character XML forbids: C0 controls, U+FFFE, U+FFFF (UTF-8 ``EF BF BE/BF``).

    One memchr per forbidden byte: on an article-sized body, 29 of them cost half of one
    ``translate`` pass (which copies the bytes through a table). The exact U+FFFE/U+FFFF test
    runs only when an ``EF`` lead byte is present at all."""
    if any(map(raw.__contains__, _FORBIDDEN_EACH)):
        return False
    return b"\xef" not in raw or (b"\xef\xbf\xbe" not in raw and b"\xef\xbf\xbf" not in raw)


def _character_data(raw: bytes) -> str | None:
    """The text libxml2 makes of markup-free character data ``raw``, or None for anything it
    would not read silently (other entities, bad bytes, forbidden characters): those runs stay
    in the document for libxml2. Each step is one C pass over the bytes."""
    if not _clean(raw):
        return None
    if b"\r" in raw:
        raw = raw.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    if b"&" in raw:
        unescaped = _named_refs(raw)
        if unescaped is None:  # numeric references (or a stray "&"): decode those first
            unescaped = _numeric_refs(raw)
            if unescaped is None:
                return None
        raw = unescaped
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _named_refs(raw: bytes) -> bytes | None:
    """``raw`` with the five predefined entities replaced; None when some "&" is not one.

    Presence tests are memchr: after each replacement, no "&" left means done."""
    for ref, char in _NAMED_BUT_AMP:
        parts = raw.split(ref)
        if len(parts) > 1:
            raw = char.join(parts)
            if b"&" not in raw:
                return raw
    if raw.count(b"&") != raw.count(b"&amp;"):
        return None  # an entity XML does not define, a numeric reference or a bare "&"
    return raw.replace(b"&amp;", b"&")


def _numeric_refs(raw: bytes) -> bytes | None:
    if _AMP_HELD in raw:
        return None
    try:
        raw = _NUMREF.sub(_numref, raw)
    except ValueError:
        return None
    if b"&" in raw:
        named = _named_refs(raw)
        if named is None:
            return None
        raw = named
    return raw.replace(_AMP_HELD, b"&")


def lift_bodies(data: bytes) -> tuple[bytes, dict[str, str]]:
    """Replace large CDATA sections and large runs of escaped text that open an element with
    placeholders; returns the bytes to parse and each body's text by placeholder.

    Nothing is lifted that libxml2 would not read silently (invalid UTF-8, forbidden
    characters, entities XML does not define): the parser then reports it as it would have.
    Should a lift ever break the structure (a ``>`` inside an attribute value), the parser
    reports errors and the caller parses the document whole.
    """
    runs = len(data) >= 32 * _LIFT_MIN  # below, cutting at every "<" costs more than it saves
    first = _cdata_start(data, 0)
    if not runs and first < 0:
        return data, {}
    token = os.urandom(6).hex()
    found: dict[str, str] = {}
    data, whole = _lift_cdata(data, first, token, found)
    # Never beside a large CDATA section left in place (it holds markup); and the size that
    # pays for the cut is that of what is left once the CDATA bodies are out (often little).
    if whole and len(data) >= 32 * _LIFT_MIN:
        data = _lift_runs(data, token, found)
    return data, found


def _mark(token: str, found: dict[str, str], text: str) -> bytes:
    mark = f"{_MARK_START}{token}:{len(found)}{_MARK_END}"
    found[mark] = text
    return mark.encode("utf-8")


def _cdata_end(data: bytes, pos: int) -> int:
    """``data.find(b"]]>", pos)``, by memchr on "]" (rare in bodies): twice as fast. A few
    tries, then the plain search: a body full of "]" must not become a Python loop."""
    for _ in range(8):
        pos = data.find(b"]", pos)
        if pos < 0 or data.startswith(b"]]>", pos):
            return pos
        pos += 1
    return data.find(b"]]>", pos)


def _cdata_start(data: bytes, pos: int) -> int:
    """``data.find(b"<![CDATA[", pos)``, by memchr on "[" (rare outside CDATA sections): in a
    document with none (escaped Atom) the plain search reads every byte at a third of memchr's
    speed. A few tries, then the plain search from where the tries got to (a start before it
    would have put its "[" among those tried)."""
    for _ in range(8):
        bracket = data.find(b"[", pos + 2)
        if bracket < 0:
            return -1
        if data.startswith(b"<![CDATA[", bracket - 2):
            return bracket - 2
        pos = bracket - 1
    return data.find(b"<![CDATA[", pos)


def _lift_cdata(data: bytes, start: int, token: str, found: dict[str, str]
                ) -> tuple[bytes, bool]:
    """Lift the large CDATA sections, the first at ``start`` (-1: none); the flag is False
    when one had to stay in place."""
    if start < 0:
        return data, True
    if not _clean(data):  # C loop; a regex is 5x slower
        return data, False  # the slow path strips them; lifted text would bypass libxml2
    out: list[bytes] = []
    copied = 0
    lifted: dict[str, str] = {}
    while start >= 0:
        # Most sections are small (names, categories, summaries): one bounded search settles
        # those; only a section reaching past the threshold needs the long search.
        end = data.find(b"]]>", start + 9, start + 11 + _LIFT_MIN)
        if end < 0:
            end = _cdata_end(data, start + 9)
            if end < 0:
                break
        if end - start - 9 >= _LIFT_MIN:
            section = data[start + 9:end]
            if b"\r" in section:
                section = section.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
            try:
                text = section.decode("utf-8")
            except UnicodeDecodeError:
                return data, False
            out.append(data[copied:start])
            out.append(_mark(token, lifted, text))
            copied = end + 3
        start = data.find(b"<![CDATA[", end + 3)
    if not lifted:
        return data, True
    found.update(lifted)
    out.append(data[copied:])
    return b"".join(out), True


def _lift_runs(data: bytes, token: str, found: dict[str, str]) -> bytes:
    """Lift long runs of character data that open an element.

    The document is cut at every "<" (one C split; linear on any input): a piece longer than
    the threshold is a tag and the text after it. A run that starts inside a comment,
    processing instruction or small CDATA section and reaches past its end contains the
    terminator and is left alone; one that ends inside it only puts a placeholder where nothing
    reads it (comments and PIs are dropped; a CDATA section too small to lift cannot hold a run
    long enough to be one).
    """
    pieces = data.split(b"<")
    long = [i for i, piece in enumerate(pieces) if len(piece) > _LIFT_MIN]
    if not long:
        return data
    ends = list(accumulate(map(len, pieces)))
    ours = f"{_MARK_START}{token}".encode() if found else None  # placeholders stay as they are
    starts: list[int] = []
    raws: list[bytes] = []
    for i in long:
        piece = pieces[i]
        gt = piece.find(b">")
        # Only the text that opens an element: after a start tag (not "</", "<!", "<?", "/>").
        if gt <= 0 or piece[:1] in (b"/", b"!", b"?") or piece[gt - 1] == 0x2F:
            continue
        raw = piece[gt + 1:]
        if len(raw) < _LIFT_MIN:
            continue
        if b">" in raw and (b"-->" in raw or b"?>" in raw or b"]]>" in raw):
            continue
        if ours is not None and ours in raw:
            continue
        starts.append(ends[i] - len(piece) + i + gt + 1)  # i "<" before piece i
        raws.append(raw)
    out: list[bytes] = []
    copied = 0
    for start, raw, text in zip(starts, raws, _runs_text(raws), strict=True):
        if text is None:
            continue
        out.append(data[copied:start])
        out.append(_mark(token, found, text))
        copied = start + len(raw)
    if not out:
        return data
    out.append(data[copied:])
    return b"".join(out)


def _runs_text(raws: list[bytes]) -> list[str | None]:
    """``_character_data`` of each run, read by expat in one pass over them all.

    Unescaping a run costs one C pass instead of a split/join per entity kind, a reference
    scan and a decode: an escaped HTML body has an entity every few dozen bytes. Expat reads
    character data as libxml2 does (predefined entities and character references replaced,
    line ends normalised; undefined entities, bare "&", invalid references, forbidden
    characters and malformed UTF-8 are errors), and a run holds no "<", so it cannot close
    its wrapper. Expat stops at the first error: that run and the ones after it get the
    per-run reading, which decides each exactly as before.
    """
    if not raws:
        return []
    texts: list[str | None] = []
    chunks: list[str] = []

    def end(_name: str) -> None:
        texts.append("".join(chunks))
        chunks.clear()

    parser = pyexpat.ParserCreate("utf-8")
    parser.buffer_text = True
    parser.buffer_size = 1 << 16
    parser.CharacterDataHandler = chunks.append
    parser.EndElementHandler = end
    try:
        parser.Parse(b"<d><r>" + b"</r><r>".join(raws) + b"</r></d>", True)
    except pyexpat.ExpatError:
        pass
    del texts[len(raws):]  # the wrapper's own end
    texts.extend(map(_character_data, raws[len(texts):]))
    return texts


def lifted(sections: dict[str, str] | None) -> object:
    """Make ``sections`` the lifted bodies that text_of restores (returns the reset token)."""
    return _LIFTED.set(sections)


def unlift(token: object) -> None:
    _LIFTED.reset(token)  # type: ignore[arg-type]


def _escape(text: str) -> str:
    """Text as lxml serialises character data."""
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace("\r", "&#13;"))


def _restore(text: str, escape: bool = False) -> str:
    sections = _LIFTED.get()
    if not sections:
        return text
    if not escape:
        whole = sections.get(text)
        if whole is not None:
            return whole
        return _MARK_RE.sub(lambda m: sections.get(m.group(0), m.group(0)), text)

    def put(m: re.Match[str]) -> str:
        body = sections.get(m.group(0))
        return m.group(0) if body is None else _escape(body)
    return _MARK_RE.sub(put, text)


def text_of(el: etree._Element) -> str | None:
    """The element's text content, stripped; None when empty."""
    if len(el):
        text = "".join(el.itertext())
    else:
        text = el.text
        if text is None:
            return None
    if _MARK_START in text:
        text = _restore(text.strip())
    text = text.strip()
    return text or None


def inner_markup(el: etree._Element) -> str | None:
    """Text plus serialized child elements: markup a publisher forgot to escape stays markup."""
    if not len(el):
        return text_of(el)
    head = el.text or ""
    parts = [_restore(head) if _MARK_START in head else head]
    for child in el:
        if isinstance(child.tag, str):
            markup = _XMLNS.sub("", etree.tostring(child, encoding="unicode", with_tail=True))
            parts.append(_restore(markup, escape=True) if _MARK_START in markup else markup)
        else:
            tail = child.tail or ""
            parts.append(_restore(tail) if _MARK_START in tail else tail)
    text = "".join(parts).strip()
    return text or None
