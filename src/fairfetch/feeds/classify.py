"""Podcast, video, newsletter or blog: decided by what the feed ships, with the evidence kept.

A tag is a claim; the feed's content is the evidence. ``itunes:owner`` and ``itunes:author``
alone do not make a podcast: newsletter platforms emit them on every publication, with image
enclosures and nothing else that looks like a show. What counts:

1. ``podcast:medium``: an explicit, deliberate statement of what the feed is.
2. Audio enclosures, or ``media:`` audio content (as ``media:`` video content is video
   evidence): a podcast, whoever hosts it.
3. Video enclosures, ``media:`` video content, or a known video platform: video.
4. A newsletter platform, by generator, headers, hosts or fingerprint: newsletter.
5. A declared show (``itunes:type``, the ``podcast:`` namespace): a podcast, episodes or not
   (a show that has not released its first episode is still a show).
6. Otherwise: blog.

Pure: ``classify(signals)`` only reads the ``Signals`` the parser gathered.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from urllib.parse import urlsplit

__all__ = ["NEWSLETTER_PLATFORMS", "Signals", "classify", "detect_platform"]


@dataclass(frozen=True)
class Signals:
    generator: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    urls: tuple[str, ...] = ()  # feed URL, self link, site link
    enclosure_hosts: tuple[str, ...] = ()
    entries: int = 0
    audio_entries: int = 0
    video_entries: int = 0
    image_entries: int = 0
    media_video_entries: int = 0
    media_audio_entries: int = 0  # entries whose audio is media:content (no video beside it)
    itunes_owner: bool = False
    itunes_author: bool = False
    itunes_type: str | None = None
    itunes_category: bool = False
    podcast_tags: tuple[str, ...] = ()  # podcast: elements present at channel level
    podcast_medium: str | None = None
    youtube_ns: bool = False


# name, generator pattern, host suffixes, enclosure/CDN hosts, header fingerprints
_Platform = tuple[str, re.Pattern[str] | None, tuple[str, ...], tuple[str, ...],
                  tuple[tuple[str, str], ...]]

NEWSLETTER_PLATFORMS: tuple[_Platform, ...] = (
    ("substack", re.compile(r"\bsubstack\b", re.I), ("substack.com",),
     ("substackcdn.com", "substack-post-media.s3.amazonaws.com"),
     (("x-served-by", "substack"), ("x-substack-cache", ""))),
    ("ghost", re.compile(r"^\s*ghost\b", re.I), ("ghost.io",), (), (("x-ghost-cache-status", ""),)),
    ("beehiiv", re.compile(r"beehiiv", re.I), ("beehiiv.com",), ("beehiiv-images-production",),
     (("x-beehiiv", ""),)),
    ("buttondown", re.compile(r"buttondown", re.I), ("buttondown.email", "buttondown.com"),
     ("buttondown-attachments",), ()),
    ("mailchimp", re.compile(r"mailchimp", re.I),
     ("campaign-archive.com", "mailchi.mp", "list-manage.com"),
     ("mcusercontent.com",), ()),
    ("convertkit", re.compile(r"convertkit|\bkit\.com\b", re.I), ("ck.page", "convertkit.com",
                                                                  "kit.com"), (), ()),
    ("revue", re.compile(r"\brevue\b", re.I), ("getrevue.co",), (), ()),
    ("tinyletter", re.compile(r"tinyletter", re.I), ("tinyletter.com",), (), ()),
    ("emailoctopus", re.compile(r"emailoctopus", re.I), ("emailoctopus.com",), (), ()),
    ("paragraph", re.compile(r"paragraph\.xyz", re.I), ("paragraph.xyz",), (), ()),
    ("letterbox", re.compile(r"^\s*letterbox\b", re.I), ("letterbox.test",), (),
     (("x-platform", "letterbox"),)),
)

_VIDEO_HOSTS = ("youtube.com", "youtu.be", "vimeo.com", "dailymotion.com", "odysee.com",
                "rumble.com")

_PODCAST_MEDIUM = {"podcast": "podcast", "music": "podcast", "audiobook": "podcast",
                   "video": "video", "film": "video", "newsletter": "newsletter", "blog": "blog"}


@lru_cache(maxsize=8192)  # the same feed, self and site URLs on every fetch of a feed
def _host(url: str) -> str:
    # Fast path for the common absolute http(s) URL; urlsplit for everything else.
    scheme_end = url.find("://")
    if 0 < scheme_end <= 5:
        netloc = url[scheme_end + 3 :].split("/", 1)[0].split("?", 1)[0].rsplit("@", 1)[-1]
        if netloc and "[" not in netloc:
            return netloc.split(":", 1)[0].lower()
    try:
        return (urlsplit(url).hostname or "").lower()
    except ValueError:
        return ""


def _under(host: str, suffix: str) -> bool:
    return host == suffix or host.endswith("." + suffix)


@lru_cache(maxsize=8192)
def _is_video_host(host: str) -> bool:
    return any(_under(host, v) for v in _VIDEO_HOSTS)


_NONE = len(NEWSLETTER_PLATFORMS)
_MARKED_HEADERS = frozenset(h for p in NEWSLETTER_PLATFORMS for h, _ in p[4])


@lru_cache(maxsize=1024)  # generators repeat across a crawl ("WordPress 6.4")
def _generator_platform(generator: str) -> int:
    for i, (_name, gen, _s, _c, _h) in enumerate(NEWSLETTER_PLATFORMS):
        if gen is not None and gen.search(generator):
            return i
    return _NONE


@lru_cache(maxsize=8192)
def _host_platform(host: str) -> int:
    for i, (_name, _g, suffixes, _c, _h) in enumerate(NEWSLETTER_PLATFORMS):
        if any(_under(host, s) for s in suffixes):
            return i
    return _NONE


@lru_cache(maxsize=8192)
def _cdn_platform(host: str) -> int:
    for i, (_name, _g, _s, cdn_hosts, _h) in enumerate(NEWSLETTER_PLATFORMS):
        if any(c in host for c in cdn_hosts):
            return i
    return _NONE


def detect_platform(signals: Signals) -> tuple[str, str] | None:
    """The newsletter platform a feed is served by, and the fingerprint that shows it."""
    hosts = list(dict.fromkeys(h for h in map(_host, signals.urls) if h))
    # The first platform any fingerprint points at, from cached per-value lookups; the ordered
    # scan below then starts there and words the evidence (most feeds match none: no scan).
    first = min(
        _generator_platform(signals.generator) if signals.generator else _NONE,
        min(map(_host_platform, hosts), default=_NONE),
        min(map(_cdn_platform, signals.enclosure_hosts), default=_NONE),
        0 if not _MARKED_HEADERS.isdisjoint(map(str.lower, signals.headers)) else _NONE,
    )
    if first == _NONE:
        return None
    headers = {k.lower(): v.lower() for k, v in signals.headers.items()}
    for name, gen, suffixes, cdn_hosts, header_marks in NEWSLETTER_PLATFORMS[first:]:
        if gen is not None and signals.generator and gen.search(signals.generator):
            return name, f"generator {signals.generator!r}"
        for hname, hvalue in header_marks:
            if hname in headers and (not hvalue or hvalue in headers[hname]):
                return name, f"header {hname}: {headers[hname]}"
        for h in hosts:
            if any(_under(h, s) for s in suffixes):
                return name, f"host {h}"
        for h in signals.enclosure_hosts:
            if any(c in h for c in cdn_hosts):
                return name, f"enclosures hosted on {h}"
    return None


def classify(s: Signals) -> tuple[str, list[str]]:
    """``(kind, evidence)``: the kind and the observations that decided it, in plain words."""
    evidence: list[str] = []
    medium = (s.podcast_medium or "").strip().lower()
    if medium not in _PODCAST_MEDIUM and medium.endswith("l"):
        medium = medium[:-1]  # "podcastL", "musicL": the list variants of a medium
    if medium in _PODCAST_MEDIUM:
        return _PODCAST_MEDIUM[medium], [f"podcast:medium {s.podcast_medium!r}"]

    declared: list[str] = []
    if s.itunes_type:
        declared.append(f"itunes:type {s.itunes_type!r}")
    if s.podcast_tags:
        declared.append("podcast: namespace (" + ", ".join(sorted(set(s.podcast_tags))) + ")")

    platform = detect_platform(s)

    if s.audio_entries or s.media_audio_entries:
        if s.audio_entries:
            evidence.append(f"{s.audio_entries} of {s.entries} entries ship audio enclosures")
        if s.media_audio_entries:
            evidence.append(
                f"{s.media_audio_entries} of {s.entries} entries carry media: audio content")
        evidence.extend(declared)
        if platform:
            evidence.append(f"hosted on {platform[0]} ({platform[1]})")
        return "podcast", evidence

    video_host = next((h for h in map(_host, s.urls) if h and _is_video_host(h)), None)
    if s.video_entries or s.media_video_entries or video_host or s.youtube_ns:
        if s.video_entries:
            evidence.append(f"{s.video_entries} of {s.entries} entries ship video enclosures")
        if s.media_video_entries:
            evidence.append(f"{s.media_video_entries} of {s.entries} entries carry media: video")
        if video_host:
            evidence.append(f"video platform {video_host}")
        if s.youtube_ns:
            evidence.append("yt: namespace (YouTube)")
        return "video", evidence

    if platform:
        evidence.append(f"newsletter platform {platform[0]} ({platform[1]})")
        if s.itunes_owner or s.itunes_author:
            evidence.append("itunes:owner/itunes:author present but no declared show or audio: "
                            "not a podcast")
        if s.image_entries:
            evidence.append(f"{s.image_entries} of {s.entries} entries ship image enclosures")
        return "newsletter", evidence

    if declared:
        evidence.extend(declared)
        if s.entries == 0:
            evidence.append("declared show without episodes yet")
        return "podcast", evidence

    if s.itunes_owner or s.itunes_author:
        evidence.append("itunes:owner/itunes:author alone: a claim without a declared show or "
                        "audio enclosures, not a podcast")
    if s.itunes_category:
        evidence.append("itunes:category without audio enclosures")
    evidence.append("no audio, video or newsletter platform evidence")
    return "blog", evidence
