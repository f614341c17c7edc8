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
import re
from contextvars import ContextVar

from lxml import etree

__all__ = ["XML_BASE", "inner_markup", "key_of", "lift_cdata", "lifted", "make_parser",
           "text_of"]

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


# Large CDATA sections (article bodies) are lifted out of the document before libxml2 sees it
# and put back when their element's text is read: the parser then only walks the feed's
# structure, which is most of the speed-up over parsing every body byte by byte.
_MARK_START = "\ue000"
_MARK_END = "\ue001"
_LIFT_MIN = 1024
_LIFTED: ContextVar[dict[str, str] | None] = ContextVar("fairfetch_lifted_cdata", default=None)
_MARK_RE = re.compile(_MARK_START + r"[0-9a-f]+:\d+" + _MARK_END)


_FORBIDDEN = bytes([*range(0, 9), 11, 12, *range(14, 32)])  # C0 controls XML forbids


def _newlines(text: str) -> str:
    """XML end-of-line handling, as libxml2 applies it to the text it parses."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def lift_cdata(data: bytes) -> tuple[bytes, dict[str, str]]:
    """Replace CDATA sections of at least 1 KB with placeholders; returns the bytes to parse
    and each section's text by placeholder.

    The parser then only walks the feed's structure. Nothing is lifted when a section is not
    valid UTF-8 (the caller's slow path deals with the encoding). Escaped (non-CDATA) bodies are
    left to libxml2: measured, its entity decoding beats any unescaping done from Python.
    Should a lift ever break the structure, the parser reports errors and the caller parses the
    document whole.
    """
    if data.find(b"<![CDATA[") < 0:
        return data, {}
    if len(data.translate(None, _FORBIDDEN)) != len(data):  # C loop; a regex is 5x slower
        return data, {}  # the slow path strips them; lifted text would bypass libxml2's check
    token = os.urandom(6).hex()
    out: list[bytes] = []
    found: dict[str, str] = {}
    copied = 0

    def place(start: int, end: int, text: str) -> None:
        nonlocal copied
        mark = f"{_MARK_START}{token}:{len(found)}{_MARK_END}"
        found[mark] = text
        out.append(data[copied:start])
        out.append(mark.encode("utf-8"))
        copied = end

    start = data.find(b"<![CDATA[")
    while start >= 0:
        end = data.find(b"]]>", start + 9)
        if end < 0:
            break
        if end - start - 9 >= _LIFT_MIN:
            try:
                text = data[start + 9:end].decode("utf-8")
            except UnicodeDecodeError:
                return data, {}
            place(start, end + 3, _newlines(text))
        start = data.find(b"<![CDATA[", end + 3)
    if not found:
        return data, {}
    out.append(data[copied:])
    return b"".join(out), found


def lifted(sections: dict[str, str] | None) -> object:
    """Make ``sections`` the lifted CDATA that text_of restores (returns the reset token)."""
    return _LIFTED.set(sections)


def unlift(token: object) -> None:
    _LIFTED.reset(token)  # type: ignore[arg-type]


def _restore(text: str) -> str:
    sections = _LIFTED.get()
    if not sections:
        return text
    whole = sections.get(text)
    if whole is not None:
        return whole
    return _MARK_RE.sub(lambda m: sections.get(m.group(0), m.group(0)), text)


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
    parts = [el.text or ""]
    for child in el:
        if isinstance(child.tag, str):
            parts.append(_XMLNS.sub("", etree.tostring(child, encoding="unicode", with_tail=True)))
        else:
            parts.append(child.tail or "")
    text = "".join(parts).strip()
    if _MARK_START in text:
        text = _restore(text).strip()
    return text or None
