"""An ``atom:author`` (or ``atom:contributor``) on an RSS channel names the feed's author, as it
does on an Atom feed and as ``atom:author`` on an RSS item names the item's: some generators
write the channel's byline only that way. feedparser reads it into ``feed.author_detail``."""

from __future__ import annotations

import pytest

from fairfetch.feeds import parse_feed
from fairfetch.feeds.model import Contact, Person

_ATOM = "http://www.w3.org/2005/Atom"


def _rss(channel_extra: str, version: str = "2.0") -> bytes:
    return (f"<rss version='{version}' xmlns:atom='{_ATOM}'><channel><title>Blog</title>"
            f"<link>https://blog.example/</link>{channel_extra}"
            "<item><title>a</title><link>https://blog.example/a</link>"
            "<atom:author><atom:name>Bob Roe</atom:name></atom:author></item>"
            "</channel></rss>").encode()


def test_feeds_rss_channel_atom_author_is_the_feeds_author_and_contact() -> None:
    feed = parse_feed(_rss("<atom:author><atom:name>Jane Doe</atom:name>"
                           "<atom:email>jane@blog.example</atom:email>"
                           "<atom:uri>https://github.com/jane</atom:uri></atom:author>"))
    assert feed.authors == [Person("Jane Doe", "jane@blog.example", "https://github.com/jane")]
    assert feed.contacts == [
        Contact("mailto:jane@blog.example", "email", "atom:author"),
        Contact("https://github.com/jane", "github", "atom:author"),
    ]
    # the item's own atom:author stays the item's, not the channel's
    assert [a.name for a in feed.entries[0].authors] == ["Bob Roe"]
    assert "Bob Roe" not in [a.name for a in feed.authors]


def test_feeds_rss_channel_atom_author_ranks_as_atom_author() -> None:
    # the same mailbox in webMaster and atom:author keeps the stronger source
    feed = parse_feed(_rss("<webMaster>jane@blog.example (Jane Doe)</webMaster>"
                           "<atom:author><atom:email>jane@blog.example</atom:email>"
                           "</atom:author>"))
    assert feed.contacts == [Contact("mailto:jane@blog.example", "email", "atom:author")]


def test_feeds_rss_channel_atom_contributor_is_read() -> None:
    feed = parse_feed(_rss("<atom:contributor><atom:name>Ann Lee</atom:name>"
                           "<atom:uri>https://ann.example/</atom:uri></atom:contributor>"))
    assert feed.authors == [Person("Ann Lee", None, "https://ann.example/")]
    assert feed.contacts == [Contact("https://ann.example/", "web", "atom:contributor")]


@pytest.mark.parametrize("name", ["Blog", "Substack", "jane@blog.example"])
def test_feeds_rss_channel_atom_author_name_still_takes_the_person_test(name: str) -> None:
    feed = parse_feed(_rss(f"<atom:author><atom:name>{name}</atom:name>"
                           "<atom:email>jane@blog.example</atom:email></atom:author>"))
    assert feed.authors == []
    assert feed.contacts == [Contact("mailto:jane@blog.example", "email", "atom:author")]


def test_feeds_rss_channel_atom_author_in_rss10() -> None:
    doc = (f"<rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#' "
           f"xmlns='http://purl.org/rss/1.0/' xmlns:atom='{_ATOM}'>"
           "<channel rdf:about='https://blog.example/'><title>Blog</title>"
           "<link>https://blog.example/</link>"
           "<atom:author><atom:name>Jane Doe</atom:name></atom:author></channel>"
           "</rdf:RDF>").encode()
    feed = parse_feed(doc)
    assert feed.format == "rss10"
    assert feed.authors == [Person("Jane Doe")]
