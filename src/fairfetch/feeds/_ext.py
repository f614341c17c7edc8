"""Namespace extensions shared by RSS and Atom: itunes:, podcast:, media:, dc:/dcterms:,
googleplay:, sy:, yt:, and atom:link inside RSS.

Feed-level elements go through ``feed_ext``, which returns True when it consumed the element.
Entry-level ones are handlers in ``ENTRY_EXT``, by canonical key: the entry readers cache the
handler per lxml tag, so an element costs one dict lookup and one call.
"""

from __future__ import annotations

from collections.abc import Callable

from lxml import etree

from fairfetch.feeds._build import EntryBuilder, FeedBuilder, rebase, resolve
from fairfetch.feeds._xml import XML_BASE, key_of, text_of
from fairfetch.feeds.model import Enclosure, Person
from fairfetch.feeds.people import mailbox_of, parse_person

__all__ = ["ENTRY_EXT", "EntryHandler", "entry_ext", "feed_ext", "handle_link", "ignore",
           "parse_duration", "to_int"]


def to_int(value: str | None) -> int | None:
    if not value:
        return None
    try:
        n = int(value.strip().replace(",", ""))
    except ValueError:
        return None
    return n if n >= 0 else None


def parse_duration(value: str | None) -> float | None:
    """``itunes:duration``: seconds, ``MM:SS`` or ``HH:MM:SS`` (fractions allowed)."""
    if not value:
        return None
    parts = value.strip().split(":")
    if not 1 <= len(parts) <= 3:
        return None
    total = 0.0
    try:
        for part in parts:
            total = total * 60 + float(part or 0)
    except ValueError:
        return None
    return total if total >= 0 and total == total else None


# podcast:person roles (Podcast Taxonomy Project) that make a person the show's: its hosts and
# credited makers. Guests are not; a guest host is the host of the episodes they appear in.
# Keys are the role lower-cased without spaces or hyphens ("Co-Host", "co host": "cohost").
_SHOW_ROLES = frozenset({"host", "cohost", "author", "creator", "editor", "producer"})
_EPISODE_ROLES = _SHOW_ROLES | {"guesthost"}


def _role(el: etree._Element) -> str:
    """A podcast:person's role as a key of the sets above; no role is "host" (the default)."""
    role = el.get("role")
    if role is None:
        return "host"
    return "".join(role.lower().split()).replace("-", "") or "host"


def _base(el: etree._Element, base: str | None) -> str | None:
    return rebase(base, el.get(XML_BASE))


def handle_link(el: etree._Element, fb: FeedBuilder, base: str | None) -> None:
    """atom:link at feed level (in Atom or RSS): alternate, self, hub, next."""
    href = resolve(_base(el, base), el.get("href"))
    if not href:
        return
    rel = (el.get("rel") or "alternate").strip().lower()
    if rel == "alternate":
        if fb.link is None:
            fb.link = href
    elif rel == "self":
        if fb.self_url is None:
            fb.self_url = href
    elif rel == "hub":
        if href not in fb.hub_urls:
            fb.hub_urls.append(href)
    elif rel == "next" and fb.next_url is None:
        fb.next_url = href


def feed_ext(key: str, el: etree._Element, fb: FeedBuilder, base: str | None) -> bool:
    prefix, _, local = key.partition(":")
    if prefix == "itunes":
        if local == "owner":
            fb.itunes_owner = True
            name = email = None
            for c in el:
                if not isinstance(c.tag, str):
                    continue
                ck = key_of(c.tag)
                if ck.endswith(":name") or ck == "name":
                    name = text_of(c)
                elif ck.endswith(":email") or ck == "email":
                    email = mailbox_of(text_of(c))
            fb.add_person("itunes:owner", Person(name=name, email=email))
        elif local == "author":
            fb.itunes_author = True
            fb.add_person("itunes:author", parse_person(text_of(el)))
        elif local == "type":
            fb.itunes_type = text_of(el)
        elif local == "category":
            fb.itunes_category = True
            fb.add_category(el.get("text"))
            for sub in el:
                if isinstance(sub.tag, str) and key_of(sub.tag) == "itunes:category":
                    fb.add_category(sub.get("text"))
        elif local == "image":
            fb.itunes_image = resolve(_base(el, base), el.get("href") or text_of(el))
        elif local == "new-feed-url":
            fb.new_feed_url = resolve(base, text_of(el))
        elif local in ("summary", "subtitle") and fb.description_fallback is None:
            fb.description_fallback = text_of(el)
        return True
    if prefix == "podcast":
        fb.podcast_tags.append(local)
        if local == "guid":
            fb.podcast_guid = text_of(el)
        elif local == "locked":
            value = (text_of(el) or "").lower()
            fb.locked = True if value == "yes" else False if value == "no" else None
            owner = el.get("owner")
            if owner:
                fb.add_person("podcast:locked", Person(email=mailbox_of(owner)))
        elif local == "medium":
            fb.medium = text_of(el)
        elif local == "funding":
            url = resolve(base, el.get("url"))
            if url and url not in fb.funding_urls:
                fb.funding_urls.append(url)
        elif local == "person":
            if _role(el) in _SHOW_ROLES:
                fb.add_person("podcast:person", Person(
                    name=text_of(el), url=resolve(base, el.get("href"))))
        elif local == "updateFrequency":
            fb.podcast_frequency = (el.get("rrule"), text_of(el))
        return True
    if prefix == "dc":
        if local == "creator":
            fb.add_person("dc:creator", parse_person(text_of(el)))
        elif local == "publisher":
            fb.add_person("dc:publisher", parse_person(text_of(el)))
        elif local == "language":
            if fb.language is None:
                fb.language = text_of(el)
        elif local == "subject":
            fb.add_category(text_of(el))
        elif local == "date":
            if fb.updated is None:
                fb.updated = text_of(el)
        elif local == "title":
            if fb.title is None:
                fb.title = text_of(el)
        elif local == "description" and fb.description_fallback is None:
            fb.description_fallback = text_of(el)
        return True
    if prefix == "dcterms":
        if local == "modified" and fb.updated is None:
            fb.updated = text_of(el)
        return True
    if prefix == "sy":
        if local == "updatePeriod":
            fb.sy_period = text_of(el)
        elif local == "updateFrequency":
            fb.sy_frequency = text_of(el)
        return True
    if prefix == "googleplay":
        if local == "author":
            fb.add_person("googleplay:author", parse_person(text_of(el)))
        elif local in ("owner", "email"):
            fb.add_person("googleplay:owner", Person(email=mailbox_of(text_of(el))))
        elif local == "image":
            if fb.image_url is None:
                fb.image_url = resolve(base, el.get("href"))
        elif local == "category":
            fb.add_category(el.get("text"))
        elif local == "description" and fb.description_fallback is None:
            fb.description_fallback = text_of(el)
        return True
    if prefix == "media":
        if local == "thumbnail" and fb.image_url is None:
            fb.image_url = resolve(base, el.get("url"))
        return True
    if prefix == "atom":
        if local == "link":
            handle_link(el, fb, base)
        return True
    if prefix == "yt":
        fb.youtube_ns = True
        return True
    return False


def _media_item(el: etree._Element, eb: EntryBuilder, base: str | None) -> None:
    url = resolve(base, el.get("url"))
    mtype = el.get("type")
    medium = (el.get("medium") or "").lower()
    if url:
        eb.media.append(Enclosure(url=url, type=mtype, length=to_int(el.get("fileSize"))))
    mtype_low = (mtype or "").strip().lower()
    if medium == "video" or mtype_low.startswith("video/"):
        eb.media_video = True
    elif medium == "audio" or mtype_low.startswith("audio/"):
        eb.media_audio = True
    for c in el:
        if isinstance(c.tag, str) and key_of(c.tag) == "media:thumbnail" and eb.image_url is None:
            eb.image_url = resolve(base, c.get("url"))
    if medium == "image" and eb.image_url is None and url:
        eb.image_url = url


def _person_to_authors(el: etree._Element, eb: EntryBuilder, base: str | None) -> None:
    p = parse_person(text_of(el))
    if p:
        eb.authors.append(p)


def _itunes_duration(el: etree._Element, eb: EntryBuilder, base: str | None) -> None:
    eb.duration = parse_duration(text_of(el))


def _itunes_image(el: etree._Element, eb: EntryBuilder, base: str | None) -> None:
    url = resolve(base, el.get("href") or text_of(el))
    if url:
        eb.image_url = url


def _summary_if_none(el: etree._Element, eb: EntryBuilder, base: str | None) -> None:
    if eb.summary is None:
        eb.summary = text_of(el)


def _title_if_none(el: etree._Element, eb: EntryBuilder, base: str | None) -> None:
    if eb.title is None:
        eb.title = text_of(el)


def _content_encoded(el: etree._Element, eb: EntryBuilder, base: str | None) -> None:
    eb.content = text_of(el)


def _dc_date(el: etree._Element, eb: EntryBuilder, base: str | None) -> None:
    eb.dc_date = text_of(el)


def _dc_subject(el: etree._Element, eb: EntryBuilder, base: str | None) -> None:
    eb.add_category(text_of(el))


def _dcterms_published(el: etree._Element, eb: EntryBuilder, base: str | None) -> None:
    if eb.published is None:
        eb.published = text_of(el)


def _dcterms_modified(el: etree._Element, eb: EntryBuilder, base: str | None) -> None:
    if eb.updated is None:
        eb.updated = text_of(el)


def _podcast_transcript(el: etree._Element, eb: EntryBuilder, base: str | None) -> None:
    url = resolve(base, el.get("url"))
    if url:
        eb.transcripts.append(Enclosure(url=url, type=el.get("type")))


def _podcast_person(el: etree._Element, eb: EntryBuilder, base: str | None) -> None:
    name = text_of(el)
    if name and _role(el) in _EPISODE_ROLES:
        eb.authors.append(Person(name=name, url=resolve(base, el.get("href"))))


def _media_content(el: etree._Element, eb: EntryBuilder, base: str | None) -> None:
    _media_item(el, eb, base)


def _media_group(el: etree._Element, eb: EntryBuilder, base: str | None) -> None:
    for c in el:
        if isinstance(c.tag, str):
            ck = key_of(c.tag)
            if ck == "media:content":
                _media_item(c, eb, base)
            elif ck == "media:thumbnail" and eb.image_url is None:
                eb.image_url = resolve(base, c.get("url"))
            elif ck == "media:description" and eb.summary is None:
                eb.summary = text_of(c)
            elif ck == "media:title" and eb.title is None:
                eb.title = text_of(c)


def _media_thumbnail(el: etree._Element, eb: EntryBuilder, base: str | None) -> None:
    if eb.image_url is None:
        eb.image_url = resolve(base, el.get("url"))


def ignore(el: etree._Element, eb: EntryBuilder, base: str | None) -> None:
    """An element no reader uses (the handler tables' default)."""


EntryHandler = Callable[[etree._Element, EntryBuilder, "str | None"], None]

#: Entry-level extension elements by canonical key. Readers look an element up once per tag
#: (see ``entry_handler``) and call the handler: one dict lookup per element instead of a
#: chain of comparisons per prefix and then per name.
ENTRY_EXT: dict[str, EntryHandler] = {
    "itunes:author": _person_to_authors,
    "itunes:duration": _itunes_duration,
    "itunes:image": _itunes_image,
    "itunes:summary": _summary_if_none,
    "itunes:subtitle": _summary_if_none,
    "itunes:title": _title_if_none,
    "content:encoded": _content_encoded,
    "dc:creator": _person_to_authors,
    "dc:date": _dc_date,
    "dc:subject": _dc_subject,
    "dc:title": _title_if_none,
    "dc:description": _summary_if_none,
    "dcterms:issued": _dcterms_published,
    "dcterms:created": _dcterms_published,
    "dcterms:modified": _dcterms_modified,
    "podcast:transcript": _podcast_transcript,
    "podcast:person": _podcast_person,
    "media:content": _media_content,
    "media:group": _media_group,
    "media:thumbnail": _media_thumbnail,
    "media:description": _summary_if_none,
    "media:title": _title_if_none,
    "googleplay:author": _person_to_authors,
}
_ENTRY_PREFIXES = frozenset({"itunes", "content", "dc", "dcterms", "podcast", "media",
                             "googleplay"})


def entry_ext(key: str, el: etree._Element, eb: EntryBuilder, base: str | None) -> bool:
    """Apply the entry-level extension element ``el`` (canonical ``key``); True when its
    namespace is one we read (whether or not this element of it is used)."""
    handler = ENTRY_EXT.get(key)
    if handler is not None:
        handler(el, eb, base)
        return True
    return key.partition(":")[0] in _ENTRY_PREFIXES
