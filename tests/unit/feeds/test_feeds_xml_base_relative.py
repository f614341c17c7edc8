"""A relative ``xml:base`` on the root element applies once: the document's base is the URL
it was served from with the root's ``xml:base`` resolved against it, and every link under it
resolves against that (as feedparser does, and as XML Base says: a base is relative to the
base of the element's parent, the document's URL for the root)."""

from __future__ import annotations

import feedparser
import pytest

from fairfetch.feeds import parse_feed

URL = "http://example.com/root/feed.xml"

ATOM = b"""<feed xmlns="http://www.w3.org/2005/Atom" xml:base="blog/">
<title>t</title><link href="index.html"/><id>urn:x</id>
<entry><id>urn:1</id><title>a</title><link href="p1.html"/></entry>
<entry xml:base="sub/"><id>urn:2</id><title>b</title><link href="p2.html"/></entry>
</feed>"""

RSS = b"""<rss version="2.0" xml:base="blog/"><channel><title>t</title><link>index.html</link>
<item><title>a</title><link>p1.html</link></item>
<item xml:base="sub/"><title>b</title><link>p2.html</link></item>
</channel></rss>"""

RDF = b"""<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"
 xmlns="http://purl.org/rss/1.0/" xml:base="blog/">
<channel rdf:about="x"><title>t</title><link>index.html</link></channel>
<item rdf:about="urn:1"><title>a</title><link>p1.html</link></item>
<item rdf:about="urn:2" xml:base="sub/"><title>b</title><link>p2.html</link></item>
</rdf:RDF>"""


@pytest.mark.parametrize("doc", [ATOM, RSS, RDF], ids=["atom", "rss", "rdf"])
def test_feeds_relative_root_xml_base_applies_once(doc: bytes) -> None:
    feed = parse_feed(doc, URL)
    assert feed.link == "http://example.com/root/blog/index.html"
    assert [e.link for e in feed.entries] == [
        "http://example.com/root/blog/p1.html", "http://example.com/root/blog/sub/p2.html"]


@pytest.mark.parametrize("doc", [ATOM, RSS, RDF], ids=["atom", "rss", "rdf"])
def test_feeds_relative_root_xml_base_agrees_with_feedparser(doc: bytes) -> None:
    fp = feedparser.parse(doc, response_headers={"content-location": URL})
    feed = parse_feed(doc, URL)
    assert feed.link == fp.feed.link
    assert [e.link for e in feed.entries] == [e.link for e in fp.entries]


def test_feeds_absolute_root_xml_base_unchanged() -> None:
    doc = ATOM.replace(b'xml:base="blog/"', b'xml:base="https://other.example/x/"')
    feed = parse_feed(doc, URL)
    assert feed.link == "https://other.example/x/index.html"
    assert [e.link for e in feed.entries] == [
        "https://other.example/x/p1.html", "https://other.example/x/sub/p2.html"]
