"""Feed and page bodies: pure functions of (seed, site, testbed time).

Entry ``k`` of a site is published at ``origin + k * period`` with ``origin`` twenty periods
before the clock's start (plus the site's phase), so every feed starts with twenty entries and
gains exactly one each period the clock advances. The server caches a rendering per
(host, path, entry count), so XML is rebuilt only when a feed has actually published.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from email.utils import formatdate
from xml.sax.saxutils import escape, quoteattr

from fairfetch.testbed.catalog import Site
from fairfetch.testbed.names import rng, sentence

__all__ = ["Entry", "Rendered", "entries_at", "http_date", "render_feed", "render_home"]

BACKLOG = 20


@dataclass(frozen=True)
class Entry:
    index: int
    published: float
    title: str
    summary: str
    author: str


@dataclass(frozen=True)
class Rendered:
    body: bytes
    content_type: str
    etag: str
    last_modified: float | None


def http_date(ts: float) -> str:
    return formatdate(ts, usegmt=True)


def _iso(ts: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))


def entry_count(site: Site, start: float, now: float) -> int:
    """How many entries ``site`` has published by ``now`` (testbed time)."""
    if site.period <= 0:
        return 0
    origin = start - BACKLOG * site.period + site.phase
    if now < origin:
        return 0
    return int((now - origin) // site.period) + 1


def entries_at(seed: int, site: Site, start: float, count: int, items: int) -> list[Entry]:
    """The newest ``items`` of the first ``count`` entries, newest first."""
    origin = start - BACKLOG * site.period + site.phase
    out = []
    for k in range(count - 1, max(count - items, 0) - 1, -1):
        r = rng(seed, site.host, k)
        heading = sentence(r, r.randint(3, 6))
        summary = sentence(r, r.randint(12, 30))
        out.append(Entry(
            index=k,
            published=float(int(origin + k * site.period)),
            title=heading.capitalize(),
            summary=summary.capitalize() + ".",
            author=site.author,
        ))
    return out


def _finish(body: str, content_type: str, last_modified: float | None) -> Rendered:
    data = body.encode("utf-8")
    etag = '"' + hashlib.blake2b(data, digest_size=10).hexdigest() + '"'
    return Rendered(data, content_type, etag, last_modified)


def render_feed(
    site: Site, base: str, path: str, entries: list[Entry], *, extra_channel: str = ""
) -> Rendered:
    """The feed document of ``site`` as served at ``base + path``."""
    last = entries[0].published if entries else None
    if site.format == "atom10":
        return _finish(_atom(site, base, path, entries, last), "application/atom+xml", last)
    if site.format == "json11":
        return _finish(_json_feed(site, base, path, entries), "application/feed+json", last)
    if site.format == "rss10":
        return _finish(_rdf(site, base, path, entries), "application/rdf+xml", last)
    return _finish(
        _rss(site, base, path, entries, extra_channel), "application/rss+xml; charset=utf-8", last
    )


def _rss(site: Site, base: str, path: str, entries: list[Entry], extra: str) -> str:
    letterbox = site.platform == "letterbox"
    podcast = site.kind == "podcast"
    ns = ['xmlns:atom="http://www.w3.org/2005/Atom"',
          'xmlns:dc="http://purl.org/dc/elements/1.1/"',
          'xmlns:content="http://purl.org/rss/1.0/modules/content/"']
    if letterbox or podcast:
        ns.append('xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"')
    if podcast:
        ns.append('xmlns:podcast="https://podcastindex.org/namespace/1.0"')
    if site.behaviour == "hint-sy":
        ns.append('xmlns:sy="http://purl.org/rss/1.0/modules/syndication/"')
    t = escape(site.title)
    parts = [
        '<?xml version="1.0" encoding="utf-8"?>\n',
        f'<rss version="2.0" {" ".join(ns)}>\n<channel>\n',
        f"<title>{t}</title>\n<link>{base}/</link>\n",
        f"<description>{escape(_describe(site))}</description>\n<language>en</language>\n",
        f'<atom:link href={quoteattr(base + path)} rel="self" type="application/rss+xml"/>\n',
    ]
    if entries:
        parts.append(f"<lastBuildDate>{http_date(entries[0].published)}</lastBuildDate>\n")
    if letterbox:
        parts.append(
            "<generator>Letterbox</generator>\n"
            f"<image><url>{base}/img/logo.png</url><title>{t}</title><link>{base}/</link></image>\n"
            f"<itunes:owner><itunes:name>{escape(site.author)}</itunes:name>"
            f"<itunes:email>{escape(site.email)}</itunes:email></itunes:owner>\n"
            f"<itunes:author>{escape(site.author)}</itunes:author>\n"
            f"<copyright>{escape(site.author)}</copyright>\n"
        )
    elif podcast:
        parts.append(
            "<generator>testbed-podcaster</generator>\n"
            "<itunes:type>episodic</itunes:type>\n"
            f"<itunes:author>{escape(site.author)}</itunes:author>\n"
            f"<itunes:owner><itunes:name>{escape(site.author)}</itunes:name>"
            f"<itunes:email>{escape(site.email)}</itunes:email></itunes:owner>\n"
            f'<itunes:image href="{base}/cover.jpg"/>\n'
            '<itunes:category text="Technology"/>\n<itunes:explicit>false</itunes:explicit>\n'
            f'<podcast:guid>{_uuid(site.host)}</podcast:guid>\n'
            "<podcast:locked>no</podcast:locked>\n"
            '<podcast:updateFrequency rrule="FREQ=WEEKLY">Weekly</podcast:updateFrequency>\n'
        )
    else:
        parts.append(
            f"<managingEditor>{escape(site.email)} ({escape(site.author)})</managingEditor>\n"
            "<generator>testbed-blog</generator>\n"
        )
    if site.behaviour == "hint-ttl":
        parts.append("<ttl>120</ttl>\n")
    if site.behaviour == "hint-sy":
        parts.append("<sy:updatePeriod>hourly</sy:updatePeriod>\n"
                     "<sy:updateFrequency>2</sy:updateFrequency>\n")
    parts.append(extra)
    for e in entries:
        link = f"{base}/p/{e.index}"
        parts.append(
            f"<item>\n<title>{escape(e.title)}</title>\n<link>{link}</link>\n"
            f'<guid isPermaLink="false">{site.host}/{e.index}</guid>\n'
            f"<pubDate>{http_date(e.published)}</pubDate>\n"
            f"<dc:creator>{escape(e.author)}</dc:creator>\n"
            f"<description>{escape(e.summary)}</description>\n"
        )
        if letterbox:
            parts.append(
                f"<content:encoded><![CDATA[<p>{e.summary}</p>"
                f'<img src="{base}/img/{e.index}.jpg"/>]]></content:encoded>\n'
                f'<enclosure url="{base}/img/{e.index}.jpg" type="image/jpeg" length="0"/>\n'
            )
        elif podcast:
            length = 1_000_000 + rng(site.host, e.index).randint(0, 50_000_000)
            parts.append(
                f'<enclosure url="{base}/episodes/{e.index}.mp3" type="audio/mpeg" '
                f'length="{length}"/>\n'
                f"<itunes:episode>{e.index + 1}</itunes:episode>\n"
                f"<itunes:duration>{(length // 16000)}</itunes:duration>\n"
                "<itunes:episodeType>full</itunes:episodeType>\n"
            )
        parts.append("</item>\n")
    parts.append("</channel>\n</rss>\n")
    return "".join(parts)


def _atom(site: Site, base: str, path: str, entries: list[Entry], last: float | None) -> str:
    updated = _iso(last if last is not None else 0)
    parts = [
        '<?xml version="1.0" encoding="utf-8"?>\n',
        '<feed xmlns="http://www.w3.org/2005/Atom">\n',
        f"<title>{escape(site.title)}</title>\n",
        f"<subtitle>{escape(_describe(site))}</subtitle>\n",
        f'<link rel="alternate" type="text/html" href="{base}/"/>\n',
        f'<link rel="self" type="application/atom+xml" href={quoteattr(base + path)}/>\n',
        f"<id>tag:{site.host},2000:feed</id>\n<updated>{updated}</updated>\n",
        f"<author><name>{escape(site.author)}</name><email>{escape(site.email)}</email></author>\n",
        "<generator>testbed-blog</generator>\n",
    ]
    for e in entries:
        stamp = _iso(e.published)
        parts.append(
            f"<entry>\n<title>{escape(e.title)}</title>\n"
            f'<link rel="alternate" href="{base}/p/{e.index}"/>\n'
            f"<id>tag:{site.host},2000:entry-{e.index}</id>\n"
            f"<published>{stamp}</published>\n<updated>{stamp}</updated>\n"
            f"<summary>{escape(e.summary)}</summary>\n"
            f'<content type="html">{escape("<p>" + e.summary + "</p>")}</content>\n'
            "</entry>\n"
        )
    parts.append("</feed>\n")
    return "".join(parts)


def _json_feed(site: Site, base: str, path: str, entries: list[Entry]) -> str:
    doc = {
        "version": "https://jsonfeed.org/version/1.1",
        "title": site.title,
        "home_page_url": base + "/",
        "feed_url": base + path,
        "description": _describe(site),
        "language": "en",
        "authors": [{"name": site.author, "url": base + "/about"}],
        "items": [
            {
                "id": f"{site.host}/{e.index}",
                "url": f"{base}/p/{e.index}",
                "title": e.title,
                "summary": e.summary,
                "content_html": f"<p>{escape(e.summary)}</p>",
                "date_published": _iso(e.published),
                "authors": [{"name": e.author}],
            }
            for e in entries
        ],
    }
    return json.dumps(doc, indent=1) + "\n"


def _rdf(site: Site, base: str, path: str, entries: list[Entry]) -> str:
    seq = "".join(f'<rdf:li rdf:resource="{base}/p/{e.index}"/>' for e in entries)
    items = "".join(
        f'<item rdf:about="{base}/p/{e.index}">\n<title>{escape(e.title)}</title>\n'
        f"<link>{base}/p/{e.index}</link>\n<description>{escape(e.summary)}</description>\n"
        f"<dc:date>{_iso(e.published)}</dc:date>\n<dc:creator>{escape(e.author)}</dc:creator>\n"
        "</item>\n"
        for e in entries
    )
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n'
        '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" '
        'xmlns="http://purl.org/rss/1.0/" xmlns:dc="http://purl.org/dc/elements/1.1/">\n'
        f'<channel rdf:about="{base}{path}">\n<title>{escape(site.title)}</title>\n'
        f"<link>{base}/</link>\n<description>{escape(_describe(site))}</description>\n"
        f"<items><rdf:Seq>{seq}</rdf:Seq></items>\n</channel>\n{items}</rdf:RDF>\n"
    )


def _describe(site: Site) -> str:
    if site.platform == "letterbox":
        return f"A newsletter by {site.author}, on Letterbox."
    if site.kind == "podcast":
        return f"A weekly show hosted by {site.author}."
    return f"Writing by {site.author}."


def _uuid(text: str) -> str:
    h = hashlib.blake2b(text.encode(), digest_size=16).hexdigest()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


_MIME = {"atom10": "application/atom+xml", "json11": "application/feed+json",
         "rss10": "application/rdf+xml"}


def render_home(site: Site, base: str, feed_path: str | None) -> Rendered:
    """An HTML home page announcing the feed (``<link rel=alternate>``), as sites do."""
    if feed_path is None:
        link = ""
    else:
        mime = _MIME.get(site.format or "", "application/rss+xml")
        link = f'<link rel="alternate" type="{mime}" title="{escape(site.title)}" ' \
               f'href="{base}{feed_path}">'
    generator = '<meta name="generator" content="Letterbox">' if site.platform else ""
    html = (
        f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>{escape(site.title)}</title>{generator}{link}</head>\n"
        f"<body><h1>{escape(site.title)}</h1><p>{escape(_describe(site))}</p>"
        f'<p><a href="{base}/about">About</a></p></body></html>\n'
    )
    return _finish(html, "text/html; charset=utf-8", None)
