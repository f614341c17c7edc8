"""JSON Feed 1.0 and 1.1 (https://jsonfeed.org/version/1.1) into the builders.

Every value is type-checked before use: a JSON document can put a list where a string belongs,
and that must cost the field, not the feed.
"""

from __future__ import annotations

import re
from typing import Any

from fairfetch.feeds._build import EntryBuilder, FeedBuilder, resolve
from fairfetch.feeds.model import Enclosure, Person

__all__ = ["json_version", "read_json"]


_CONTROLS = dict.fromkeys([*range(0, 9), 11, 12, *range(14, 32)])
_BAD = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff]")


def _s(value: Any) -> str | None:
    """A clean string or None. JSON escapes can carry NUL and lone surrogates, which no store
    will take; they are removed here so the model never holds them."""
    if isinstance(value, str):
        if _BAD.search(value) is None:  # the common case: one C scan, no copies
            return value.strip() or None
        value = value.translate(_CONTROLS).strip()
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            value = value.encode("utf-8", "replace").decode("utf-8")
        return value or None
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return None


def json_version(doc: Any) -> str | None:
    """``json10`` / ``json11`` for a JSON Feed, else None."""
    if not isinstance(doc, dict):
        return None
    version = _s(doc.get("version")) or ""
    if "jsonfeed.org/version/1.1" in version:
        return "json11"
    if "jsonfeed.org/version/" in version:
        return "json10"
    return None


def _people(obj: dict[str, Any], base: str | None) -> list[Person]:
    out: list[Person] = []
    raw = obj.get("authors")
    if not isinstance(raw, list):
        raw = [obj["author"]] if isinstance(obj.get("author"), dict) else []
    for a in raw:
        if not isinstance(a, dict):
            continue
        url = resolve(base, _s(a.get("url")))
        email = None
        if url and url.startswith("mailto:"):
            email, url = url[7:], None
        p = Person(name=_s(a.get("name")), email=email, url=url)
        if p.name or p.email or p.url:
            out.append(p)
    return out


def read_json(doc: dict[str, Any], fb: FeedBuilder) -> None:
    base = fb.base
    fb.title = _s(doc.get("title"))
    fb.link = resolve(base, _s(doc.get("home_page_url")))
    fb.self_url = resolve(base, _s(doc.get("feed_url")))
    fb.description = _s(doc.get("description"))
    fb.language = _s(doc.get("language"))
    fb.image_url = resolve(base, _s(doc.get("icon")) or _s(doc.get("favicon")))
    fb.next_url = resolve(base, _s(doc.get("next_url")))
    for p in _people(doc, base):
        fb.add_person("json:author", p)
    hubs = doc.get("hubs")
    if isinstance(hubs, list):
        for hub in hubs:
            if isinstance(hub, dict):
                url = resolve(base, _s(hub.get("url")))
                if url and url not in fb.hub_urls:
                    fb.hub_urls.append(url)
    items = doc.get("items")
    if not isinstance(items, list):
        if items is not None:
            fb.problems.append("items is not a list")
        return
    for n, item in enumerate(items):
        if not isinstance(item, dict):
            fb.problems.append(f"item {n} is not an object")
            continue
        fb.entries.append(_item(item, base))


def _item(item: dict[str, Any], base: str | None) -> EntryBuilder:
    eb = EntryBuilder(base)
    eb.guid = _s(item.get("id"))
    eb.title = _s(item.get("title"))
    eb.link = resolve(base, _s(item.get("url")))
    eb.alt_link = resolve(base, _s(item.get("external_url")))
    eb.published = _s(item.get("date_published"))
    eb.updated = _s(item.get("date_modified"))
    eb.summary = _s(item.get("summary"))
    eb.content = _s(item.get("content_html")) or _s(item.get("content_text"))
    eb.image_url = resolve(base, _s(item.get("image")) or _s(item.get("banner_image")))
    eb.authors = _people(item, base)
    tags = item.get("tags")
    if isinstance(tags, list):
        for t in tags:
            eb.add_category(_s(t))
    attachments = item.get("attachments")
    if isinstance(attachments, list):
        for a in attachments:
            if not isinstance(a, dict):
                continue
            url = resolve(base, _s(a.get("url")))
            if not url:
                continue
            size = a.get("size_in_bytes")
            length = int(size) if isinstance(size, int | float) and not isinstance(
                size, bool) and 0 <= size < 2**63 else None
            eb.enclosures.append(Enclosure(url=url, type=_s(a.get("mime_type")), length=length))
            dur = a.get("duration_in_seconds")
            if isinstance(dur, int | float) and not isinstance(dur, bool) and eb.duration is None:
                eb.duration = float(dur)
    return eb
