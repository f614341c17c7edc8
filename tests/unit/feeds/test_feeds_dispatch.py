"""Entry elements are dispatched by a handler cached per lxml tag: the cache must change
nothing, whichever documents filled it first, and every element kind keeps its rule."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

import fairfetch.feeds._atom as atom
import fairfetch.feeds._rss as rss
from fairfetch.feeds import parse_feed
from fairfetch.feeds.model import Enclosure, Person

ITEM = b"""<rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom"
 xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/"
 xmlns:content="http://purl.org/rss/1.0/modules/content/"
 xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"
 xmlns:podcast="https://podcastindex.org/namespace/1.0" xmlns:media="http://search.yahoo.com/mrss/"
 xmlns:x="urn:unknown"><channel><title>Show</title><link>https://ex.test/</link>
<item>
 <title>First title</title><itunes:title>iTunes title loses</itunes:title><title>Second</title>
 <dc:title>dc title loses</dc:title>
 <atom:link rel="alternate" href="https://ex.test/alt"/><link>https://ex.test/1</link>
 <guid isPermaLink=" FALSE ">g-1</guid><atom:id>atom id loses</atom:id>
 <dcterms:created>2001-01-01T00:00:00Z</dcterms:created>
 <pubDate>Sun, 19 May 2002 15:21:36 GMT</pubDate>
 <atom:updated>2003-01-01T00:00:00Z</atom:updated>
 <dc:creator>Ann Lee</dc:creator><author>bo@ex.test (Bo Park)</author>
 <podcast:person href="https://ex.test/cy">Cy Vance</podcast:person>
 <category>News</category><dc:subject>Tech</dc:subject><category>News</category>
 <description>Short</description><atom:summary>atom summary loses</atom:summary>
 <content:encoded>Body</content:encoded>
 <enclosure url="/e.mp3" type="audio/mpeg" length="1,024"/>
 <atom:link rel="enclosure" href="https://ex.test/e2.mp3" type="audio/mpeg"/>
 <itunes:duration>1:02:03</itunes:duration><itunes:image href="/i.jpg"/>
 <podcast:transcript url="/t.vtt" type="text/vtt"/>
 <x:title>unknown namespace</x:title><unknown>bare</unknown><itunes:episode>3</itunes:episode>
</item></channel></rss>"""

ENTRY = b"""<feed xmlns="http://www.w3.org/2005/Atom" xmlns:dc="http://purl.org/dc/elements/1.1/">
<title>F</title><id>f</id>
<entry>
 <id>e-1</id><title type="html">&lt;b&gt;First&lt;/b&gt;</title><title>Second</title>
 <link rel="alternate" type="application/pdf" href="/doc.pdf"/>
 <link rel="alternate" href="/html"/><link rel="alternate" href="/later"/>
 <link rel="enclosure" href="/a.mp3" type="audio/mpeg" length="12"/>
 <updated>2004-01-01T00:00:00Z</updated>
 <author><name>Ann Lee</name><email>ann@ex.test</email></author>
 <category term="News"/><category>Tech</category>
 <summary>Sum</summary><content src="/elsewhere"/>
 <dc:creator>Bo Park</dc:creator><unknown>x</unknown>
</entry>
<entry><id>e-2</id><created>2005-01-01T00:00:00Z</created><content>Body</content></entry>
<entry><id>e-3</id><created>2005-01-01T00:00:00Z</created><issued>2006-01-01T00:00:00Z</issued>
</entry>
</feed>"""


@pytest.fixture(params=["cold", "warm"])
def cache(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rss, "_ITEM_BY_TAG", {})
    monkeypatch.setattr(atom, "_ENTRY_BY_TAG", {})
    if request.param == "warm":  # filled by the other format's document and by this one
        parse_feed(ENTRY)
        parse_feed(ITEM)


@pytest.mark.usefixtures("cache")
def test_feeds_dispatch_rss_item_rules() -> None:
    (e,) = parse_feed(ITEM, "https://ex.test/feed").entries
    assert e.id == "g-1"
    assert e.title == "First title"
    assert e.link == "https://ex.test/1"
    assert e.published == datetime(2002, 5, 19, 15, 21, 36, tzinfo=UTC)
    assert e.updated == datetime(2003, 1, 1, tzinfo=UTC)
    assert e.summary == "Short"
    assert e.content == "Body"
    assert e.categories == ["News", "Tech"]
    assert e.authors == [Person(name="Ann Lee"), Person(name="Bo Park", email="bo@ex.test"),
                         Person(name="Cy Vance", url="https://ex.test/cy")]
    assert e.enclosures == [Enclosure("https://ex.test/e.mp3", "audio/mpeg", 1024),
                            Enclosure("https://ex.test/e2.mp3", "audio/mpeg", None)]
    assert e.duration == 3723.0
    assert e.image_url == "https://ex.test/i.jpg"
    assert e.transcripts == [Enclosure("https://ex.test/t.vtt", "text/vtt")]


@pytest.mark.usefixtures("cache")
def test_feeds_dispatch_atom_entry_rules() -> None:
    e1, e2, e3 = parse_feed(ENTRY, "https://ex.test/atom").entries
    assert (e1.id, e1.title, e1.summary, e1.content) == ("e-1", "<b>First</b>", "Sum", None)
    assert e1.link == "https://ex.test/html"  # the first text/html alternate wins
    assert e1.enclosures == [Enclosure("https://ex.test/a.mp3", "audio/mpeg", 12)]
    assert e1.updated == datetime(2004, 1, 1, tzinfo=UTC)
    assert e1.published is None
    assert e1.authors == [Person(name="Ann Lee", email="ann@ex.test"), Person(name="Bo Park")]
    assert e1.categories == ["News", "Tech"]
    assert (e2.published, e2.content) == (datetime(2005, 1, 1, tzinfo=UTC), "Body")
    assert e3.published == datetime(2006, 1, 1, tzinfo=UTC)  # issued beats created
