"""JSON Feed 1.0 and 1.1 (https://jsonfeed.org/version/1.1) into the builders.

Every value is type-checked before use: a JSON document can put a list where a string belongs,
and that must cost the field, not the feed.
"""

from __future__ import annotations

import re
from typing import Any

from fairfetch.feeds._build import EntryBuilder, FeedBuilder, resolve
from fairfetch.feeds.model import Enclosure, Person
from fairfetch.feeds.people import parse_person

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


def _listed(value: Any, what: str, problems: list[str]) -> list[Any]:
    """A field the spec makes a list, as a list: one object (or, for tags, one string) where
    the list belongs is read as a list of one, and said; anything else is no list at all."""
    if isinstance(value, list):
        return value
    if isinstance(value, dict):
        note = f"{what} is an object, not a list: read as one"
    elif isinstance(value, str) and what == "author":
        note = "author is a string, not an object: read as a byline"
    elif isinstance(value, str) and what in ("tags", "authors"):
        note = f"{what} is a string, not a list: read as one"
    else:
        return []
    if note not in problems:
        problems.append(note)
    return [value]


def _number(value: Any) -> float | None:
    """A JSON number, or a string holding one ("1234"); finite and not negative, else None."""
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return None
    elif isinstance(value, bool) or not isinstance(value, int | float):
        return None
    n = float(value)
    return n if 0 <= n < 2**63 else None  # NaN fails both comparisons


def _people(obj: dict[str, Any], base: str | None, problems: list[str]) -> list[Person]:
    out: list[Person] = []
    value = obj.get("authors")
    if value is not None:
        raw = _listed(value, "authors", problems)
    else:  # JSON Feed 1.0: one author, an object (some write a plain byline)
        value = obj.get("author")
        raw = [value] if isinstance(value, dict) else _listed(value, "author", problems)
    for a in raw:
        if isinstance(a, str):
            p = parse_person(_s(a))
            if p is not None:
                out.append(p)
            continue
        if not isinstance(a, dict):
            continue
        url = resolve(base, _s(a.get("url")))
        email = None
        if url and url[:7].lower() == "mailto:":
            email, url = url[7:].split("?", 1)[0].strip() or None, None
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
    for p in _people(doc, base, fb.problems):
        fb.add_person("json:author", p)
    for hub in _listed(doc.get("hubs"), "hubs", fb.problems):
        if isinstance(hub, dict):
            url = resolve(base, _s(hub.get("url")))
            if url and url not in fb.hub_urls:
                fb.hub_urls.append(url)
    items = doc.get("items")
    if not isinstance(items, list | dict):
        if items is not None:
            fb.problems.append("items is not a list")
        return
    for n, item in enumerate(_listed(items, "items", fb.problems)):
        if not isinstance(item, dict):
            fb.problems.append(f"item {n} is not an object")
            continue
        fb.entries.append(_item(item, base, fb.problems))


def _item(item: dict[str, Any], base: str | None, problems: list[str]) -> EntryBuilder:
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
    eb.authors = _people(item, base, problems)
    for t in _listed(item.get("tags"), "tags", problems):
        eb.add_category(_s(t))
    for a in _listed(item.get("attachments"), "attachments", problems):
        if not isinstance(a, dict):
            continue
        url = resolve(base, _s(a.get("url")))
        if not url:
            continue
        size = _number(a.get("size_in_bytes"))
        length = None if size is None else int(size)
        eb.enclosures.append(Enclosure(url=url, type=_s(a.get("mime_type")), length=length))
        if eb.duration is None:
            eb.duration = _number(a.get("duration_in_seconds"))
    return eb
