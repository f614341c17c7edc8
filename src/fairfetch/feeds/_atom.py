"""Atom 1.0 and Atom 0.3 feeds and entries into the builders.

Atom 0.3 differs in names (``tagline``, ``issued``, ``modified``, ``created``) and in content
(``mode="escaped|xml|base64"``); both map onto the same builders.
"""

from __future__ import annotations

import base64
import binascii

from lxml import etree

from fairfetch.feeds._build import EntryBuilder, FeedBuilder, resolve
from fairfetch.feeds._ext import entry_ext, feed_ext, handle_link, to_int
from fairfetch.feeds._rss import atom_person
from fairfetch.feeds._xml import XML_BASE, inner_markup, key_of, text_of
from fairfetch.feeds.model import Enclosure

__all__ = ["atom_text", "read_atom"]


def _base(el: etree._Element, base: str | None) -> str | None:
    xb = el.get(XML_BASE)
    return resolve(base, xb) if xb else base


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


def _read_entry(entry: etree._Element, base: str | None) -> EntryBuilder:
    base = _base(entry, base)
    eb = EntryBuilder(base)
    created: str | None = None
    link_is_html = False
    for el in entry:
        tag = el.tag
        if not isinstance(tag, str):
            continue
        key = key_of(tag)
        if not key.startswith("atom:"):
            if ":" in key:
                entry_ext(key, el, eb, base)
                continue
            if key not in ("id", "title", "link", "summary", "content", "updated", "published",
                           "author", "category"):
                continue
            key = "atom:" + key
        local = key[5:]
        if local == "id":
            eb.guid = text_of(el)
        elif local == "title":
            if eb.title is None:
                eb.title = atom_text(el)
        elif local == "link":
            href = resolve(_base(el, base), el.get("href"))
            if not href:
                continue
            rel = (el.get("rel") or "alternate").strip().lower()
            if rel == "alternate":
                ltype = (el.get("type") or "text/html").lower()
                is_html = ltype in ("text/html", "application/xhtml+xml")
                if eb.link is None or (is_html and not link_is_html):
                    eb.link, link_is_html = href, is_html
            elif rel == "enclosure":
                eb.enclosures.append(
                    Enclosure(url=href, type=el.get("type"), length=to_int(el.get("length"))))
        elif local in ("published", "issued"):
            eb.published = text_of(el)
        elif local == "created":
            created = text_of(el)
        elif local in ("updated", "modified"):
            eb.updated = text_of(el)
        elif local == "summary":
            eb.summary = atom_text(el)
        elif local == "content":
            src = el.get("src")
            eb.content = atom_text(el) if src is None else None
        elif local == "author":
            p = atom_person(el, base)
            if p:
                eb.authors.append(p)
        elif local == "category":
            eb.add_category(el.get("term") or text_of(el))
    if eb.published is None and created is not None:
        eb.published = created
    return eb
