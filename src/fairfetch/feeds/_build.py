"""Mutable builders the format readers fill in, and the assembly of the frozen model.

Readers only record what the document says; everything decided from it (entry identity, people
and contacts, classification, schedule hints) is decided here, once, for every format.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from datetime import datetime
from urllib.parse import urljoin, urlsplit

from fairfetch.feeds import people
from fairfetch.feeds.classify import Signals, classify
from fairfetch.feeds.dates import parse_date_noted
from fairfetch.feeds.model import Contact, Enclosure, Entry, Feed, Person

__all__ = ["EntryBuilder", "FeedBuilder", "resolve", "resolve_html", "untracked"]

# An http(s) URL whose authority is a plain host name: its host without urlsplit.
_PLAIN_HOST = re.compile(r"https?://([A-Za-z0-9.\-]+)(?::[0-9]*)?(?=[/?#]|$)")


ENTRY_FIELDS = ("id", "title", "link", "published", "updated", "summary", "content", "authors",
                "categories", "enclosures", "image_url", "media", "duration", "transcripts")
_new = object.__new__


def _entry(values: tuple[object, ...]) -> Entry:
    """``Entry(*values)`` without the frozen dataclass's ``object.__setattr__`` per field: a
    third of the time, for the object a feed makes most of. ``values`` are in ENTRY_FIELDS
    order, which a test holds equal to the dataclass's fields."""
    entry: Entry = _new(Entry)
    entry.__dict__.update(zip(ENTRY_FIELDS, values, strict=True))
    return entry


def resolve(base: str | None, url: str | None) -> str | None:
    """An absolute URL for ``url`` against ``base`` (xml:base, feed URL); None when empty."""
    if not url:
        return None
    url = url.strip()
    if not url:
        return None
    if url.startswith(("http://", "https://")) or not base:
        return url
    if url.startswith(("mailto:", "data:", "urn:", "tag:")):
        return url
    try:
        return urljoin(base, url)
    except ValueError:
        return url


# Attributes of HTML tags that hold a URL (srcset: several, each with its descriptor).
_HTML_TAG = re.compile(r"<[A-Za-z][^<>]*>")
_URL_ATTR = re.compile(
    r"""(\s(?:href|src|poster|cite|background|longdesc|action|formaction|srcset)\s*=\s*)"""
    r"""("[^"]*"|'[^']*'|[^\s>"']+)""", re.IGNORECASE)
# Cheap first look: some URL attribute whose value is neither absolute nor a fragment.
_RELATIVE_ATTR = re.compile(
    r"""\s(?:href|src|poster|cite|background|longdesc|action|formaction|srcset)\s*=\s*["']?"""
    r"""(?![A-Za-z][A-Za-z0-9+.\-]*:|#|["'\s>])""", re.IGNORECASE)
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")


def _join_url(base: str, value: str) -> str:
    url = value.strip()
    if not url or url.startswith("#") or _SCHEME.match(url):
        return value
    try:
        return urljoin(base, url)
    except ValueError:
        return value


def _resolve_attr(base: str, m: re.Match[str]) -> str:
    prefix, raw = m.group(1), m.group(2)
    quote = raw[0] if raw[0] in "\"'" else ""
    value = raw[1:-1] if quote else raw
    if prefix.strip().lower().startswith("srcset"):
        new = ", ".join(
            " ".join([_join_url(base, part.split(None, 1)[0]), *part.split(None, 1)[1:]])
            for part in value.split(",") if part.strip())
    else:
        new = _join_url(base, value)
    if new == value or (quote and quote in new) or (not quote and any(
            c in new for c in " \t\n>\"'")):
        return m.group(0)
    return prefix + quote + new + quote


def resolve_html(html: str | None, base: str | None) -> str | None:
    """``html`` with the relative URLs in its tags' attributes resolved against ``base`` (the
    xml:base in effect where it was found, which later readers of the content cannot know).
    Only inside tags: text that shows markup (``&lt;img src=…&gt;``) is left as written."""
    if not html or not base or _RELATIVE_ATTR.search(html) is None:
        return html
    return _HTML_TAG.sub(
        lambda t: _URL_ATTR.sub(lambda m: _resolve_attr(base, m), t.group(0)), html)


def _is_web(url: str) -> bool:
    return url[:8].lower().startswith(("http://", "https://"))


def rebase(base: str | None, xml_base: str | None) -> str | None:
    """The base inside an element with ``xml:base`` = ``xml_base``. A base that resolves to
    another scheme than http(s) (``javascript:``, ``data:``) is ignored, as feedparser does:
    relative links then resolve against the document, not into a script."""
    if not xml_base:
        return base
    new = resolve(base, xml_base)
    if not new:  # blank: no base named
        return base
    try:
        scheme = urlsplit(new).scheme.lower()
    except ValueError:
        return base
    return new if scheme in ("", "http", "https") else base


class EntryBuilder:
    __slots__ = (
        "alt_link",
        "authors",
        "base",
        "categories",
        "content",
        "created",
        "dc_date",
        "duration",
        "enclosures",
        "guid",
        "guid_is_permalink",
        "image_url",
        "link",
        "link_is_html",
        "media",
        "media_audio",
        "media_video",
        "published",
        "summary",
        "title",
        "transcripts",
        "updated",
    )

    def __init__(self, base: str | None) -> None:
        self.base = base
        self.guid: str | None = None
        self.guid_is_permalink = True
        self.title: str | None = None
        self.link: str | None = None
        self.link_is_html = False  # Atom: the alternate link chosen is text/html
        self.alt_link: str | None = None
        self.published: str | None = None
        self.updated: str | None = None
        self.dc_date: str | None = None
        self.created: str | None = None  # Atom 0.3 created: published when nothing else says
        self.summary: str | None = None
        self.content: str | None = None
        self.authors: list[Person] = []
        self.categories: list[str] = []
        self.enclosures: list[Enclosure] = []
        self.media: list[Enclosure] = []
        self.media_video = False
        self.media_audio = False
        self.image_url: str | None = None
        self.duration: float | None = None
        self.transcripts: list[Enclosure] = []

    def add_category(self, term: str | None) -> None:
        if term:
            term = term.strip()
            if term and term not in self.categories:
                self.categories.append(term)


class FeedBuilder:
    def __init__(self, fmt: str, base: str | None, headers: Mapping[str, str] | None,
                 url: str | None) -> None:
        self.format = fmt
        self.base = base
        self.url = url
        self.headers = dict(headers or {})
        self.title: str | None = None
        self.link: str | None = None
        self.description: str | None = None
        self.description_fallback: str | None = None
        self.language: str | None = None
        self.image_url: str | None = None
        self.itunes_image: str | None = None
        self.generator: str | None = None
        self.updated: str | None = None
        self.people: list[tuple[str, Person]] = []
        self.categories: list[str] = []
        self.hub_urls: list[str] = []
        self.self_url: str | None = None
        self.next_url: str | None = None
        self.new_feed_url: str | None = None
        self.ttl: str | None = None
        self.sy_period: str | None = None
        self.sy_frequency: str | None = None
        self.podcast_frequency: tuple[str | None, str | None] | None = None
        self.entries: list[EntryBuilder] = []
        self.problems: list[str] = []
        self.encoding: str | None = None
        self.itunes_owner = False
        self.itunes_author = False
        self.itunes_type: str | None = None
        self.itunes_category = False
        self.podcast_tags: list[str] = []
        self.podcast_guid: str | None = None
        self.locked: bool | None = None
        self.medium: str | None = None
        self.funding_urls: list[str] = []
        self.youtube_ns = False
        self.extra_contacts: list[Contact] = []

    def add_category(self, term: str | None) -> None:
        if term:
            term = term.strip()
            if term and term not in self.categories:
                self.categories.append(term)

    def add_person(self, source: str, person: Person | None) -> None:
        if person is not None and (person.name or person.email or person.url):
            self.people.append((source, person))

    # -- assembly ------------------------------------------------------------------------------

    def _date(self, value: str | None, what: str) -> datetime | None:
        if value is None:
            return None
        dt, note = parse_date_noted(value)
        if dt is None:
            self.problems.append(f"unparseable date in {what}: {value.strip()[:60]!r}")
        elif note is not None:
            self.problems.append(f"{note} in {what}: {value.strip()[:60]!r}")
        return dt

    def _ttl_hint(self) -> float | None:
        """Seconds between updates the publisher suggests: ``<ttl>`` (minutes) first, then
        ``sy:updatePeriod``/``sy:updateFrequency``, then ``podcast:updateFrequency``."""
        if self.ttl:
            try:
                minutes = float(self.ttl.strip())
            except ValueError:
                self.problems.append(f"unreadable ttl {self.ttl.strip()[:30]!r}")
            else:
                if 0 < minutes < 10_000_000:
                    return minutes * 60.0
        if self.sy_period or self.sy_frequency:
            period = _PERIODS.get((self.sy_period or "daily").strip().lower())
            try:
                freq = float((self.sy_frequency or "1").strip())
            except ValueError:
                freq = 1.0
            if period and freq > 0:
                return period / freq
        if self.podcast_frequency:
            return _rrule_seconds(*self.podcast_frequency)
        return None

    def _entry_id(self, e: EntryBuilder, shared_guids: set[str]) -> str:
        if e.guid and e.guid not in shared_guids:
            return e.guid
        if e.link:
            return untracked(e.link) if "?" in e.link else e.link
        return _hash_id(e, _content_basis(e))

    def _split_collisions(self, eids: list[str]) -> list[str]:
        """Ids several entries came out with. Entries behind one id that ship different
        enclosures are different entries (episodes that all link to the show's page, or share
        its URL as guid): the id identifies none of them, and each is named by its content
        hash (with the id it shared, so unlike anything else). Otherwise they are one entry
        repeated or republished (a retitled post at its old link), left equal for the caller
        to drop. Called only when some id repeats."""
        groups: dict[str, set[str]] = {}
        for e, eid in zip(self.entries, eids, strict=True):
            groups.setdefault(eid, set()).add(e.enclosures[0].url if e.enclosures else "")
        split = {eid for eid, enclosures in groups.items() if len(enclosures) > 1}
        if not split:
            return eids
        self.problems.append(f"{len(split)} id(s) shared by entries with different "
                             "enclosures: those entries are identified by their content")
        return [_hash_id(e, eid + "\x1f" + _content_basis(e)) if eid in split else eid
                for e, eid in zip(self.entries, eids, strict=True)]

    def _keep_web_urls(self) -> None:
        """Hubs, self, next and new-feed URLs are where the crawler and the WebSub subscriber
        go next: one that is not http(s) (``javascript:``, ``data:``, ``mailto:``) leads
        nowhere they may go, so it is dropped here and said, not discovered later as a
        failed subscription or a feed moved onto a mailbox."""
        hubs = [u for u in self.hub_urls if _is_web(u)]
        dropped = len(self.hub_urls) - len(hubs)
        self.hub_urls = hubs
        for name in ("self_url", "next_url", "new_feed_url"):
            url = getattr(self, name)
            if url is not None and not _is_web(url):
                setattr(self, name, None)
                dropped += 1
        if dropped:
            self.problems.append(f"{dropped} hub/self/next/new-feed URL(s) not http(s) ignored")

    def finish(self) -> Feed:
        # A guid shared by entries that are plainly different (other link or title) identifies
        # none of them; the same entry repeated is a duplicate, dropped below.
        guids = [e.guid for e in self.entries if e.guid]
        shared: set[str] = set()
        if len(set(guids)) != len(guids):  # only then is any guid shared
            sharers: dict[str, set[tuple[str | None, str | None]]] = {}
            for e in self.entries:
                if e.guid:
                    link = e.link or e.alt_link
                    sharers.setdefault(e.guid, set()).add(
                        (untracked(link) if link and "?" in link else link, e.title))
            shared = {g for g, variants in sharers.items() if len(variants) > 1}
        if shared:
            self.problems.append(f"{len(shared)} guid(s) shared by several entries: "
                                 "those entries are identified by link")
        entries: list[Entry] = []
        seen: set[str] = set()
        audio = video = image = media_video = media_audio = 0
        enclosure_hosts: set[str] = set()
        title = self.title
        eids = [self._entry_id(e, shared) for e in self.entries]
        if len(set(eids)) != len(eids):
            eids = self._split_collisions(eids)
        for e, eid in zip(self.entries, eids, strict=True):
            if eid in seen:
                self.problems.append(f"duplicate entry dropped: {eid[:80]}")
                continue
            seen.add(eid)
            link = e.link or e.alt_link
            if link is None and e.guid and e.guid_is_permalink and e.guid.startswith(
                    ("http://", "https://")):
                link = e.guid
            published = None if e.published is None else self._date(e.published, "published")
            updated = None if e.updated is None else self._date(e.updated, "updated")
            if e.dc_date is not None:
                dc = self._date(e.dc_date, "dc:date")
                if updated is None:
                    updated = dc
                if published is None:
                    published = dc
            if e.enclosures:
                kinds = set()
                for enc in e.enclosures:
                    # the type when it names a medium; else (none, application/octet-stream,
                    # a bare "mp3", application/ogg) the file's extension
                    major = (enc.type or "").split("/", 1)[0].strip().lower()
                    kinds.add(major if major in _MEDIA_TYPES else _type_from_ext(enc.url))
                    m = _PLAIN_HOST.match(enc.url)
                    if m is not None:
                        host = m.group(1)
                    else:
                        try:
                            host = urlsplit(enc.url).hostname
                        except ValueError:
                            host = None
                    if host:
                        enclosure_hosts.add(host.lower())
                audio += "audio" in kinds
                video += "video" in kinds
                image += "image" in kinds
            if e.media_video:
                media_video += 1
            elif e.media_audio and not (e.enclosures and "video" in kinds):
                # audio beside the item's video (media: or enclosure) is an alternative
                # rendition of the video, not a show (kinds: this entry's, set above)
                media_audio += 1
            summary, content = e.summary, e.content
            if e.base != self.url and e.base is not None:  # an xml:base is in effect
                summary, content = resolve_html(summary, e.base), resolve_html(content, e.base)
            entries.append(_entry((
                eid, e.title, link, published, updated, summary, content,
                people.entry_people(e.authors, title), e.categories, e.enclosures, e.image_url,
                e.media, e.duration, e.transcripts,
            )))
        self._keep_web_urls()
        authors, contacts = people.collect(self.people, title)
        if self.extra_contacts:
            known = {c.url.lower() for c in contacts}
            contacts.extend(c for c in self.extra_contacts if c.url.lower() not in known)
        urls = tuple(u for u in (self.url, self.self_url, self.link) if u)
        signals = Signals(
            generator=self.generator, headers=self.headers, urls=urls,
            enclosure_hosts=tuple(sorted(enclosure_hosts)), entries=len(entries),
            audio_entries=audio, video_entries=video, image_entries=image,
            media_video_entries=media_video, media_audio_entries=media_audio,
            itunes_owner=self.itunes_owner,
            itunes_author=self.itunes_author, itunes_type=self.itunes_type,
            itunes_category=self.itunes_category, podcast_tags=tuple(self.podcast_tags),
            podcast_medium=self.medium, youtube_ns=self.youtube_ns,
        )
        kind, evidence = classify(signals)
        return Feed(
            format=self.format, title=title, link=self.link,
            description=self.description or self.description_fallback,
            language=self.language, image_url=self.itunes_image or self.image_url,
            generator=self.generator, authors=authors, contacts=contacts,
            categories=self.categories, hub_urls=self.hub_urls, self_url=self.self_url,
            kind=kind, kind_evidence=evidence, entries=entries, problems=self.problems, ok=True,
            ttl_hint=self._ttl_hint(), new_feed_url=self.new_feed_url,
            updated=self._date(self.updated, "feed updated"), next_url=self.next_url,
            encoding=self.encoding, podcast_guid=self.podcast_guid, locked=self.locked,
            medium=self.medium, funding_urls=self.funding_urls,
        )


# Query parameters that say who sent a reader, never which page: analytics campaigns (utm_*),
# mailing-list ids (Mailchimp, HubSpot, Marketo), ad click ids. Many publishers put them on their
# feed's links, some with values that change from one fetch to the next.
_TRACKING = re.compile(
    r"(?:utm_[a-z0-9_]*|fbclid|gclid|dclid|gbraid|wbraid|msclkid|yclid|twclid|igshid|mc_cid"
    r"|mc_eid|_hsenc|_hsmi|mkt_tok)$", re.IGNORECASE)


def untracked(link: str) -> str:
    """``link`` without its tracking parameters (see _TRACKING): what identifies an entry that
    has no guid, so that the same post is the same entry however the feed tagged it this time."""
    head, sep, query = link.partition("?")
    if not sep:
        return link
    query, hash_, fragment = query.partition("#")
    kept = [p for p in query.split("&") if p and not _TRACKING.match(p.partition("=")[0])]
    return head + ("?" + "&".join(kept) if kept else "") + hash_ + fragment


def _content_basis(e: EntryBuilder) -> str:
    """What an entry without a usable guid or link is identified by: its title, first
    enclosure and date (its text only when it has neither title nor enclosure), so editing a
    body does not make a new entry."""
    enclosure = e.enclosures[0].url if e.enclosures else ""
    return "\x1f".join((e.title or "", enclosure, e.published or e.dc_date or "",
                        "" if (e.title or enclosure) else (e.content or e.summary or "")))


def _hash_id(e: EntryBuilder, basis: str) -> str:
    if e.guid:
        basis = e.guid + "\x1f" + basis
    return "hash:" + hashlib.sha256(basis.encode("utf-8", "replace")).hexdigest()[:32]


_PERIODS = {"hourly": 3600.0, "daily": 86400.0, "weekly": 604800.0, "monthly": 2629800.0,
            "yearly": 31557600.0}
_RRULE_FREQ = {"SECONDLY": 1.0, "MINUTELY": 60.0, "HOURLY": 3600.0, "DAILY": 86400.0,
               "WEEKLY": 604800.0, "MONTHLY": 2629800.0, "YEARLY": 31557600.0}


def _rrule_seconds(rrule: str | None, text: str | None) -> float | None:
    """Approximate seconds between episodes from ``podcast:updateFrequency``: the ``rrule``
    attribute's FREQ/INTERVAL (BYDAY with several days shortens a weekly rule), else the
    human text ("Daily", "Weekly", "Biweekly", "Monthly")."""
    if rrule:
        parts = dict(p.split("=", 1) for p in rrule.upper().split(";") if "=" in p)
        base = _RRULE_FREQ.get(parts.get("FREQ", "").strip())
        if base:
            try:
                interval = max(1, int(parts.get("INTERVAL", "1")))
            except ValueError:
                interval = 1
            seconds = base * interval
            byday = [d for d in parts.get("BYDAY", "").split(",") if d.strip()]
            if parts.get("FREQ") == "WEEKLY" and len(byday) > 1:
                seconds /= len(byday)
            return seconds
    if text:
        low = text.strip().lower()
        for word, secs in (("biweekly", 1209600.0), ("fortnight", 1209600.0),
                           ("daily", 86400.0), ("weekly", 604800.0), ("monthly", 2629800.0),
                           ("hourly", 3600.0), ("yearly", 31557600.0), ("annual", 31557600.0)):
            if word in low:
                return secs
    return None


_EXT_KIND = {"mp3": "audio", "m4a": "audio", "aac": "audio", "ogg": "audio", "oga": "audio",
             "opus": "audio", "wav": "audio", "flac": "audio", "mp4": "video", "m4v": "video",
             "mov": "video", "webm": "video", "mkv": "video", "jpg": "image", "jpeg": "image",
             "png": "image", "gif": "image", "webp": "image"}


_MEDIA_TYPES = frozenset({"audio", "video", "image"})


def _type_from_ext(url: str) -> str:
    path = url.split("?", 1)[0].split("#", 1)[0]
    ext = path.rsplit(".", 1)[-1].lower() if "." in path.rsplit("/", 1)[-1] else ""
    return _EXT_KIND.get(ext, "")
