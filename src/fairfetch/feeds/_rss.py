"""RSS 0.90, 0.91, 0.92, 1.0 (RDF) and 2.0 channels and items into the builders.

One pass over each element's children, dispatching on the canonical key; namespaced extensions
fall through to ``_ext``. RDF puts items (and the image) beside the channel rather than in it, and
some 0.9x feeds do the same by mistake: items are collected from both places.
"""

from __future__ import annotations

from lxml import etree

from fairfetch.feeds._build import EntryBuilder, FeedBuilder, rebase, resolve
from fairfetch.feeds._ext import ENTRY_EXT, EntryHandler, feed_ext, handle_link, ignore, to_int
from fairfetch.feeds._xml import NS_RDF, XML_BASE, inner_markup, key_of, text_of
from fairfetch.feeds.model import Enclosure, Person
from fairfetch.feeds.people import mailbox_of, parse_person

__all__ = ["atom_person", "read_rss"]

_RDF_ABOUT = f"{{{NS_RDF}}}about"
_RDF_RESOURCE = f"{{{NS_RDF}}}resource"


def _base(el: etree._Element, base: str | None) -> str | None:
    return rebase(base, el.get(XML_BASE))


def atom_person(el: etree._Element, base: str | None) -> Person | None:
    name = email = uri = None
    for c in el:
        if not isinstance(c.tag, str):
            continue
        local = key_of(c.tag).rpartition(":")[2]
        if local == "name":
            name = text_of(c)
        elif local == "email":
            email = mailbox_of(text_of(c))
        elif local in ("uri", "url"):
            uri = resolve(base, text_of(c))
    if name is None and email is None and uri is None:
        return parse_person(text_of(el))
    if name and email is None and "@" in name:
        p = parse_person(name)
        if p is not None:
            name, email = p.name, p.email
    return Person(name=name, email=email, url=uri)


def _image(el: etree._Element, fb: FeedBuilder, base: str | None) -> None:
    for c in el:
        if isinstance(c.tag, str) and key_of(c.tag) == "url":
            url = resolve(base, text_of(c))
            if url and fb.image_url is None:
                fb.image_url = url
            return
    about = el.get(_RDF_ABOUT) or el.get(_RDF_RESOURCE)
    if about and fb.image_url is None:
        fb.image_url = resolve(base, about)


def read_rss(root: etree._Element, fb: FeedBuilder) -> None:
    base = _base(root, fb.base)
    items: list[etree._Element] = []
    cbase = base
    channel = None
    for el in root:
        tag = el.tag
        if not isinstance(tag, str):
            continue
        key = key_of(tag)
        if key == "channel" and channel is None:
            channel = el
        elif key == "item":
            items.append(el)
        elif key == "image":
            _image(el, fb, base)
    if channel is None:
        fb.problems.append("no channel element")
    else:
        cbase = _base(channel, base)
        _read_channel(channel, fb, cbase, items)
    for item in items:
        fb.entries.append(_read_item(item, cbase))


def _read_channel(channel: etree._Element, fb: FeedBuilder, base: str | None,
                  items: list[etree._Element]) -> None:
    for el in channel:
        tag = el.tag
        if not isinstance(tag, str):
            continue
        key = key_of(tag)
        if key == "item":
            items.append(el)
        elif key == "title":
            if fb.title is None:
                fb.title = text_of(el)
        elif key == "link":
            if el.get("href") is not None:  # an Atom link missing its namespace
                handle_link(el, fb, base)
            elif fb.link is None:
                fb.link = resolve(base, text_of(el))
        elif key == "description":
            if fb.description is None:
                fb.description = inner_markup(el)
        elif key == "language":
            fb.language = text_of(el)
        elif key == "generator":
            fb.generator = text_of(el)
        elif key == "managingEditor":
            fb.add_person("managingEditor", parse_person(text_of(el)))
        elif key == "webMaster":
            fb.add_person("webMaster", parse_person(text_of(el)))
        elif key == "lastBuildDate":
            fb.updated = text_of(el)
        elif key == "pubDate":
            if fb.updated is None:
                fb.updated = text_of(el)
        elif key == "category":
            fb.add_category(text_of(el))
        elif key == "image":
            _image(el, fb, base)
        elif key == "ttl":
            fb.ttl = text_of(el)
        elif key == "author":
            fb.add_person("author", parse_person(text_of(el)))
        elif key in ("atom:author", "atom:contributor"):
            # some generators write the channel's byline only in Atom's vocabulary; it is the
            # feed's author as it is in an Atom feed (feed_ext reads only atom:link)
            fb.add_person(key, atom_person(el, base))
        elif ":" in key:
            feed_ext(key, el, fb, base)


def _item_title(el: etree._Element, eb: EntryBuilder, base: str | None) -> None:
    if eb.title is None:
        eb.title = text_of(el)


def _item_link(el: etree._Element, eb: EntryBuilder, base: str | None) -> None:
    href = el.get("href")
    if href is not None:
        if (el.get("rel") or "alternate") == "alternate" and eb.alt_link is None:
            eb.alt_link = resolve(_base(el, base), href)
    elif eb.link is None:
        eb.link = resolve(_base(el, base), text_of(el))


def _item_description(el: etree._Element, eb: EntryBuilder, base: str | None) -> None:
    eb.summary = inner_markup(el)


def _item_guid(el: etree._Element, eb: EntryBuilder, base: str | None) -> None:
    eb.guid = text_of(el)
    eb.guid_is_permalink = (el.get("isPermaLink") or "true").strip().lower() != "false"


def _item_pub_date(el: etree._Element, eb: EntryBuilder, base: str | None) -> None:
    eb.published = text_of(el)


def _item_author(el: etree._Element, eb: EntryBuilder, base: str | None) -> None:
    p = parse_person(text_of(el))
    if p:
        eb.authors.append(p)


def _item_category(el: etree._Element, eb: EntryBuilder, base: str | None) -> None:
    eb.add_category(text_of(el))


def _item_enclosure(el: etree._Element, eb: EntryBuilder, base: str | None) -> None:
    url = resolve(_base(el, base), el.get("url"))
    if url:
        eb.enclosures.append(
            Enclosure(url=url, type=el.get("type"), length=to_int(el.get("length"))))


_ITEM: dict[str, EntryHandler] = {
    "title": _item_title, "link": _item_link, "description": _item_description,
    "guid": _item_guid, "pubDate": _item_pub_date, "author": _item_author,
    "category": _item_category, "enclosure": _item_enclosure,
}
# Handler by lxml tag, filled as tags are met (bounded: hostile feeds invent tags without end).
_ITEM_BY_TAG: dict[str, EntryHandler] = {}


def _item_handler(tag: str) -> EntryHandler:
    key = key_of(tag)
    handler = _ITEM.get(key)
    if handler is None:
        if key.startswith("atom:"):
            handler = _ATOM_IN_ITEM.get(key[5:], ignore)
        else:
            handler = ENTRY_EXT.get(key, ignore)
    if len(_ITEM_BY_TAG) < 10_000:
        _ITEM_BY_TAG[tag] = handler
    return handler


def _read_item(item: etree._Element, base: str | None) -> EntryBuilder:
    base = _base(item, base)
    eb = EntryBuilder(base)
    about = item.get(_RDF_ABOUT)
    by_tag = _ITEM_BY_TAG
    for el in item:
        tag = el.tag
        handler = by_tag.get(tag)
        if handler is None:
            if not isinstance(tag, str):
                continue  # an entity reference left unresolved
            handler = _item_handler(tag)
        handler(el, eb, base)
    if eb.guid is None and about:
        eb.guid = about.strip() or None
    return eb


def _atom_link(el: etree._Element, eb: EntryBuilder, base: str | None) -> None:
    href = resolve(_base(el, base), el.get("href"))
    rel = (el.get("rel") or "alternate").strip().lower()
    if href and rel == "alternate" and eb.alt_link is None:
        eb.alt_link = href
    elif href and rel == "enclosure":
        eb.enclosures.append(
            Enclosure(url=href, type=el.get("type"), length=to_int(el.get("length"))))


def _atom_id(el: etree._Element, eb: EntryBuilder, base: str | None) -> None:
    if eb.guid is None:
        eb.guid = text_of(el)


def _atom_updated(el: etree._Element, eb: EntryBuilder, base: str | None) -> None:
    eb.updated = text_of(el)


def _atom_published(el: etree._Element, eb: EntryBuilder, base: str | None) -> None:
    if eb.published is None:
        eb.published = text_of(el)


def _atom_author(el: etree._Element, eb: EntryBuilder, base: str | None) -> None:
    p = atom_person(el, base)
    if p:
        eb.authors.append(p)


def _atom_summary(el: etree._Element, eb: EntryBuilder, base: str | None) -> None:
    if eb.summary is None:
        eb.summary = inner_markup(el)


# atom: elements inside an RSS item, by local name.
_ATOM_IN_ITEM: dict[str, EntryHandler] = {
    "link": _atom_link, "id": _atom_id, "updated": _atom_updated, "published": _atom_published,
    "author": _atom_author, "summary": _atom_summary,
}
