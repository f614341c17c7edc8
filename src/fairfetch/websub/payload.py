"""What a delivery's body says (pure): does it name entries, YouTube style?

YouTube's hub does not send the feed: it sends a small Atom document naming one video
(``yt:videoId``) with its ``published``/``updated`` dates, often before the video is in the
channel feed, and for years-old videos whenever their title or description is edited — or an
``at:deleted-entry`` tombstone. Such a payload is a claim about entries, which point 6 of the
issue turns into a decision (websub/ping.py). Any other body (a full fat ping, a partial one,
nothing at all) is an ordinary ping: a reason to re-fetch, never the truth.
"""

from __future__ import annotations

from dataclasses import dataclass

from lxml import etree

from fairfetch.feeds.dates import parse_date
from fairfetch.websub.ping import NamedEntry

__all__ = ["Payload", "read_payload"]

_ATOM = "{http://www.w3.org/2005/Atom}"
_YT = "{http://www.youtube.com/xml/schemas/2015}"
_TOMBSTONE = "{http://purl.org/atompub/tombstones/1.0}deleted-entry"
_PARSER_KW = {"resolve_entities": False, "no_network": True, "load_dtd": False, "recover": True,
              "huge_tree": False}


@dataclass(frozen=True)
class Payload:
    #: Entries the payload names (YouTube style); empty for an ordinary ping.
    named: tuple[NamedEntry, ...] = ()
    #: Ids of entries the payload says were deleted.
    deleted: tuple[str, ...] = ()

    @property
    def names_entries(self) -> bool:
        return bool(self.named or self.deleted)


def _text(el: etree._Element | None) -> str | None:
    if el is None or el.text is None:
        return None
    return el.text.strip() or None


def read_payload(body: bytes) -> Payload:
    """Never raises: an unreadable body is an ordinary ping."""
    stripped = body.lstrip()
    if not stripped.startswith(b"<"):
        return Payload()
    try:
        root = etree.fromstring(stripped, etree.XMLParser(**_PARSER_KW))
    except etree.XMLSyntaxError:
        return Payload()
    if root is None or root.tag != _ATOM + "feed":
        return Payload()
    named: list[NamedEntry] = []
    for entry in root.findall(_ATOM + "entry"):
        if entry.find(_YT + "videoId") is None:
            continue
        entry_id = _text(entry.find(_ATOM + "id"))
        if entry_id is None:
            video = _text(entry.find(_YT + "videoId"))
            entry_id = f"yt:video:{video}" if video else None
        if entry_id is None:
            continue
        named.append(
            NamedEntry(
                entry_id=entry_id,
                published=parse_date(_text(entry.find(_ATOM + "published"))),
                updated=parse_date(_text(entry.find(_ATOM + "updated"))),
            )
        )
    deleted = tuple(
        ref for el in root.findall(_TOMBSTONE) if (ref := (el.get("ref") or "").strip())
    )
    return Payload(tuple(named), deleted)
