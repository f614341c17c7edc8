"""Atom 1.0 and Atom 0.3 feeds and entries into the builders.

Atom 0.3 differs in names (``tagline``, ``issued``, ``modified``, ``created``) and in content
(``mode="escaped|xml|base64"``); both map onto the same builders.
"""

from __future__ import annotations

import base64
import binascii

from lxml import etree

from fairfetch.feeds._build import EntryBuilder, FeedBuilder, rebase, resolve, resolve_html
from fairfetch.feeds._ext import ENTRY_EXT, EntryHandler, feed_ext, handle_link, ignore, to_int
from fairfetch.feeds._rss import atom_person
from fairfetch.feeds._xml import XML_BASE, inner_markup, key_of, text_of
from fairfetch.feeds.model import Enclosure

__all__ = ["atom_text", "read_atom"]


def _base(el: etree._Element, base: str | None) -> str | None:
    return rebase(base, el.get(XML_BASE))


def atom_text(el: etree._Element) -> str | None:
    """A text construct: ``xhtml`` is the markup inside its div, base64 is decoded, ``xml`` mode
    and unescaped markup stay markup, everything else is the text."""
    ctype = (el.get("type") or "text").lower()
    mode = (el.get("mode") or "").lower()
    if ctype in ("xhtml", "application/xhtml+xml"):
        for c in el:
            if isinstance(c.tag, str) and key_of(c.tag).endswith("div"):
                return inner_markup(c)
        return inner_markup(el)
    if mode == "base64":
        raw = text_of(el)
        if raw is None:
            return None
        try:
            return base64.b64decode(raw).decode("utf-8", "replace").strip() or None
        except (binascii.Error, ValueError):
            return raw
    if len(el):
        return inner_markup(el)
    return text_of(el)


def read_atom(root: etree._Element, fb: FeedBuilder) -> None:
    base = _base(root, fb.base)
    for el in root:
        tag = el.tag
        if not isinstance(tag, str):
            continue
        key = key_of(tag)
        if not key.startswith("atom:"):
            if key in ("entry", "title", "link", "subtitle", "author", "updated"):
                key = "atom:" + key  # un-namespaced Atom (recovered or careless documents)
            elif ":" in key:
                feed_ext(key, el, fb, base)
                continue
            else:
                continue
        local = key[5:]
        if local == "entry":
            fb.entries.append(_read_entry(el, base))
        elif local == "title":
            if fb.title is None:
                fb.title = atom_text(el)
        elif local == "link":
            handle_link(el, fb, base)
        elif local in ("subtitle", "tagline"):
            fb.description = atom_text(el)
        elif local in ("updated", "modified"):
            fb.updated = text_of(el)
        elif local == "author":
            fb.add_person("atom:author", atom_person(el, base))
        elif local == "contributor":
            fb.add_person("atom:contributor", atom_person(el, base))
        elif local == "category":
            fb.add_category(el.get("term") or text_of(el))
        elif local == "generator":
            fb.generator = text_of(el) or el.get("uri")
        elif local == "logo" or (local == "icon" and fb.image_url is None):
            fb.image_url = resolve(base, text_of(el))


def _entry_id(el: etree._Element, eb: EntryBuilder, base: str | None) -> None:
    eb.guid = text_of(el)


def _entry_title(el: etree._Element, eb: EntryBuilder, base: str | None) -> None:
    if eb.title is None:
        eb.title = atom_text(el)


def _entry_link(el: etree._Element, eb: EntryBuilder, base: str | None) -> None:
    href = resolve(_base(el, base), el.get("href"))
    if not href:
        return
    rel = (el.get("rel") or "alternate").strip().lower()
    if rel == "alternate":
        ltype = (el.get("type") or "text/html").lower()
        is_html = ltype in ("text/html", "application/xhtml+xml")
        if eb.link is None or (is_html and not eb.link_is_html):
            eb.link, eb.link_is_html = href, is_html
    elif rel == "enclosure":
        eb.enclosures.append(
            Enclosure(url=href, type=el.get("type"), length=to_int(el.get("length"))))


def _entry_published(el: etree._Element, eb: EntryBuilder, base: str | None) -> None:
    eb.published = text_of(el)


def _entry_created(el: etree._Element, eb: EntryBuilder, base: str | None) -> None:
    eb.created = text_of(el)


def _entry_updated(el: etree._Element, eb: EntryBuilder, base: str | None) -> None:
    eb.updated = text_of(el)


def _entry_summary(el: etree._Element, eb: EntryBuilder, base: str | None) -> None:
    eb.summary = atom_text(el)
    if el.get(XML_BASE) is not None:  # its own base: resolved here, the entry's in finish
        eb.summary = resolve_html(eb.summary, _base(el, base))


def _entry_content(el: etree._Element, eb: EntryBuilder, base: str | None) -> None:
    eb.content = atom_text(el) if el.get("src") is None else None
    if el.get(XML_BASE) is not None:  # its own base: resolved here, the entry's in finish
        eb.content = resolve_html(eb.content, _base(el, base))


def _entry_author(el: etree._Element, eb: EntryBuilder, base: str | None) -> None:
    p = atom_person(el, base)
    if p:
        eb.authors.append(p)


def _entry_category(el: etree._Element, eb: EntryBuilder, base: str | None) -> None:
    eb.add_category(el.get("term") or text_of(el))


# Atom entry elements by local name (1.0 and 0.3 spellings).
_ENTRY: dict[str, EntryHandler] = {
    "id": _entry_id, "title": _entry_title, "link": _entry_link,
    "published": _entry_published, "issued": _entry_published, "created": _entry_created,
    "updated": _entry_updated, "modified": _entry_updated, "summary": _entry_summary,
    "content": _entry_content, "author": _entry_author, "category": _entry_category,
}
# Read even without the Atom namespace (recovered or careless documents).
_BARE = frozenset({"id", "title", "link", "summary", "content", "updated", "published",
                   "author", "category"})
# Handler by lxml tag, filled as tags are met (bounded: hostile feeds invent tags without end).
_ENTRY_BY_TAG: dict[str, EntryHandler] = {}


def _entry_handler(tag: str) -> EntryHandler:
    key = key_of(tag)
    if key.startswith("atom:"):
        handler = _ENTRY.get(key[5:], ignore)
    elif ":" in key:
        handler = ENTRY_EXT.get(key, ignore)
    else:
        handler = _ENTRY[key] if key in _BARE else ignore
    if len(_ENTRY_BY_TAG) < 10_000:
        _ENTRY_BY_TAG[tag] = handler
    return handler


def _read_entry(entry: etree._Element, base: str | None) -> EntryBuilder:
    base = _base(entry, base)
    eb = EntryBuilder(base)
    by_tag = _ENTRY_BY_TAG
    for el in entry:
        tag = el.tag
        handler = by_tag.get(tag)
        if handler is None:
            if not isinstance(tag, str):
                continue  # an entity reference left unresolved
            handler = _entry_handler(tag)
        handler(el, eb, base)
    if eb.published is None and eb.created is not None:
        eb.published = eb.created
    return eb
