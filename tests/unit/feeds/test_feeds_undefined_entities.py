"""An entity no one defined (neither XML's nor HTML's) is kept as the text it is, and the escapes
after it in the same text survive: libxml2's recover mode dropped both ("A &foo; B &amp; C"
came out "A &foo; B  C", and "&lt;p&gt;" after one vanished)."""

from __future__ import annotations

from fairfetch import parse_feed

FEED = (
    b'<?xml version="1.0"?><rss version="2.0"><channel><title>A &foo; B &amp; C</title>'
    b"<item><title>x &bar; y &amp; z &lt;p&gt;</title><guid>1</guid></item>"
    b"<item><title>caf&eacute; &amp; cr&egrave;me</title><guid>2</guid></item>"
    b"</channel></rss>"
)


def test_feeds_undefined_entity_keeps_the_escapes_after_it() -> None:
    feed = parse_feed(FEED, "http://entities.test/feed")
    assert feed.ok
    assert feed.title == "A &foo; B & C"
    assert [e.title for e in feed.entries] == ["x &bar; y & z <p>", "café & crème"]
    assert any("repaired" in p for p in feed.problems)  # said, not silent
