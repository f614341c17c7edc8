"""The stable Python API: ``fairfetch.parse_feed`` and the model, as DESIGN.md lists them."""

from __future__ import annotations

import dataclasses
import inspect
import json
from datetime import UTC, datetime, timedelta
from typing import Any, get_type_hints

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fairfetch
from fairfetch import Contact, Enclosure, Entry, Feed, Person

RSS_ITEM = (
    "<item><title>One</title><link>http://a.test/1</link><guid>g1</guid>"
    "<pubDate>Tue, 03 Mar 2026 10:00:00 +0200</pubDate>"
    '<enclosure url="http://a.test/1.mp3" type="audio/mpeg" length="123"/></item>'
)
DOCS: dict[str, bytes] = {
    "rss090": (
        b'<?xml version="1.0"?><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" '
        b'xmlns="http://my.netscape.com/rdf/simple/0.9/"><channel><title>T</title>'
        b"<link>http://a.test/</link><description>d</description></channel>"
        b"<item><title>One</title><link>http://a.test/1</link></item></rdf:RDF>"
    ),
    "rss091": (
        b'<?xml version="1.0"?><rss version="0.91"><channel><title>T</title>'
        b"<link>http://a.test/</link><description>d</description><language>en</language>"
        b"<item><title>One</title><link>http://a.test/1</link></item></channel></rss>"
    ),
    "rss092": (
        '<?xml version="1.0"?><rss version="0.92"><channel><title>T</title>'
        "<link>http://a.test/</link><description>d</description>"
        f"{RSS_ITEM}</channel></rss>"
    ).encode(),
    "rss10": (
        b'<?xml version="1.0"?><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" '
        b'xmlns="http://purl.org/rss/1.0/" xmlns:dc="http://purl.org/dc/elements/1.1/">'
        b'<channel rdf:about="http://a.test/"><title>T</title><link>http://a.test/</link>'
        b"<description>d</description></channel>"
        b'<item rdf:about="http://a.test/1"><title>One</title><link>http://a.test/1</link>'
        b"<dc:date>2026-03-03T10:00:00+02:00</dc:date></item></rdf:RDF>"
    ),
    "rss20": (
        '<?xml version="1.0"?><rss version="2.0"><channel><title>T</title>'
        "<link>http://a.test/</link><description>d</description>"
        "<managingEditor>ed@a.test (Ed Itor)</managingEditor>"
        f"{RSS_ITEM}</channel></rss>"
    ).encode(),
    "atom03": (
        b'<?xml version="1.0"?><feed version="0.3" xmlns="http://purl.org/atom/ns#">'
        b'<title>T</title><link rel="alternate" type="text/html" href="http://a.test/"/>'
        b"<modified>2026-03-03T10:00:00+02:00</modified>"
        b'<entry><title>One</title><link rel="alternate" type="text/html" href="http://a.test/1"/>'
        b"<id>g1</id><issued>2026-03-03T10:00:00+02:00</issued>"
        b"<modified>2026-03-03T10:00:00+02:00</modified></entry></feed>"
    ),
    "atom10": (
        b'<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>T</title>'
        b'<link href="http://a.test/"/><id>urn:t</id><updated>2026-03-03T10:00:00+02:00</updated>'
        b"<author><name>Ann Author</name><email>ann@a.test</email></author>"
        b'<entry><title>One</title><link href="http://a.test/1"/><id>g1</id>'
        b"<published>2026-03-03T10:00:00+02:00</published>"
        b"<updated>2026-03-03T10:00:00+02:00</updated></entry></feed>"
    ),
    "json10": json.dumps({
        "version": "https://jsonfeed.org/version/1", "title": "T",
        "home_page_url": "http://a.test/", "author": {"name": "Ann Author"},
        "items": [{"id": "g1", "url": "http://a.test/1", "title": "One",
                   "date_published": "2026-03-03T10:00:00+02:00", "content_text": "x"}],
    }).encode(),
    "json11": json.dumps({
        "version": "https://jsonfeed.org/version/1.1", "title": "T",
        "home_page_url": "http://a.test/", "authors": [{"name": "Ann Author"}],
        "items": [{"id": "g1", "url": "http://a.test/1", "title": "One",
                   "date_published": "2026-03-03T10:00:00+02:00", "content_text": "x"}],
    }).encode(),
}
PUBLISHED = datetime(2026, 3, 3, 8, 0, tzinfo=UTC)


def _fields(cls: type) -> list[str]:
    return [f.name for f in dataclasses.fields(cls)]


def test_the_model_has_the_contract_fields_in_order() -> None:
    assert _fields(Feed)[:17] == [
        "format", "title", "link", "description", "language", "image_url", "generator",
        "authors", "contacts", "categories", "hub_urls", "self_url", "kind", "kind_evidence",
        "entries", "problems", "ok",
    ]  # fmt: skip
    assert _fields(Entry)[:11] == [
        "id", "title", "link", "published", "updated", "summary", "content", "authors",
        "categories", "enclosures", "image_url",
    ]  # fmt: skip
    assert _fields(Person) == ["name", "email", "url"]
    assert _fields(Contact) == ["url", "network", "source"]
    assert _fields(Enclosure) == ["url", "type", "length"]
    hints = get_type_hints(Entry)
    assert hints["published"] == datetime | None
    assert hints["enclosures"] == list[Enclosure]
    assert get_type_hints(Feed)["authors"] == list[Person]
    assert get_type_hints(Feed)["contacts"] == list[Contact]
    assert get_type_hints(Enclosure)["length"] == int | None
    for cls in (Feed, Entry, Person, Contact, Enclosure):
        assert cls.__dataclass_params__.frozen, cls  # type: ignore[union-attr]
    params = inspect.signature(fairfetch.parse_feed).parameters
    assert list(params)[:3] == ["data", "url", "headers"]
    assert params["url"].default is None
    assert params["headers"].default is None
    # the top-level names
    for name in ("parse_feed", "Feed", "Entry", "Person", "Contact", "Enclosure",
                 "FairfetchError"):  # fmt: skip
        assert hasattr(fairfetch, name)


@pytest.mark.parametrize("fmt", list(DOCS))
def test_each_format_is_named_and_times_are_aware_utc(fmt: str) -> None:
    feed = fairfetch.parse_feed(DOCS[fmt], url="http://a.test/feed", headers={})
    assert isinstance(feed, Feed)
    assert feed.ok, feed.problems
    assert feed.format == fmt
    assert feed.title == "T"
    [entry] = feed.entries
    assert isinstance(entry, Entry)
    assert entry.title == "One"
    assert entry.link == "http://a.test/1"
    assert isinstance(entry.id, str)
    assert entry.id
    for t in (entry.published, entry.updated):
        assert t is None or (t.tzinfo is not None and t.utcoffset() == timedelta(0)), t
    if fmt not in ("rss090", "rss091"):
        assert entry.published == PUBLISHED or entry.updated == PUBLISHED
    # ids are stable across crawls of the same bytes
    again = fairfetch.parse_feed(DOCS[fmt], url="http://a.test/feed")
    assert [e.id for e in again.entries] == [entry.id]


def test_people_contacts_and_enclosures_have_their_types() -> None:
    feed = fairfetch.parse_feed(DOCS["rss20"], url="http://a.test/feed")
    [enc] = feed.entries[0].enclosures
    assert enc == Enclosure("http://a.test/1.mp3", "audio/mpeg", 123)
    assert feed.contacts
    for c in feed.contacts:
        assert isinstance(c, Contact)
        assert c.url
        assert c.network
        assert c.source  # provenance is never empty
    assert any(c.source == "managingEditor" for c in feed.contacts)
    atom = fairfetch.parse_feed(DOCS["atom10"])
    assert Person("Ann Author", "ann@a.test", None) in atom.authors
    assert feed.kind in ("podcast", "video", "newsletter", "blog")
    assert all(isinstance(e, str) for e in feed.kind_evidence)
    assert feed.kind_evidence


@pytest.mark.parametrize(
    "data",
    [b"", b"\x00\xff\xfe", b"<html><body>hello</body></html>", b"{}", b'{"items": 3}',
     b"<rss", b"<?xml version='1.0'?><!DOCTYPE x [<!ENTITY a 'aaaa'>]><rss>&a;</rss>",
     "<rss version='2.0'><channel><title>é</title></channel></rss>".encode("utf-16")],
)  # fmt: skip
def test_never_raises_and_says_why(data: bytes) -> None:
    feed = fairfetch.parse_feed(data, url=None, headers={"Content-Type": "text/html"})
    assert isinstance(feed, Feed)
    assert isinstance(feed.problems, list)
    if not feed.ok:
        assert feed.problems


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.binary(max_size=600) | st.text(max_size=300).map(str.encode))
def test_never_raises_on_arbitrary_bytes(data: bytes) -> None:
    feed: Any = fairfetch.parse_feed(data)
    assert isinstance(feed, Feed)
    assert feed.ok or feed.problems


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(list(DOCS.values())), st.integers(0, 2000), st.binary(max_size=8))
def test_never_raises_on_damaged_feeds(doc: bytes, at: int, junk: bytes) -> None:
    at %= len(doc)
    feed = fairfetch.parse_feed(doc[:at] + junk + doc[at + len(junk):], url="http://a.test/f")
    assert isinstance(feed, Feed)
