"""Contacts are one normalised form per mailbox, whichever way a feed writes it: ``mailto:`` in
any case, with a query, in an email field or as a profile URI. A mailbox is never lost because
of how it was spelled, and a URI nobody can follow (``javascript:``) is not a contact."""

from __future__ import annotations

import pytest

from fairfetch.feeds import parse_feed
from fairfetch.feeds.model import Contact, Person
from fairfetch.feeds.people import collect


def _atom(author: str) -> bytes:
    return (f"<feed xmlns='http://www.w3.org/2005/Atom'><title>Blog</title>"
            f"<author><name>Jane Doe</name>{author}</author></feed>").encode()


@pytest.mark.parametrize("author", [
    "<email>MAILTO:Jane@X.org</email>",
    "<email>Mailto: jane@x.org</email>",
    "<uri>mailto:Jane@X.org</uri>",
    "<uri>MAILTO:jane@x.org</uri>",
    "<uri>mailto:jane@x.org?subject=Hello</uri>",
    "<email>jane@x.org</email><uri>mailto:Jane@X.org</uri>",
])
def test_feeds_contacts_mailto_every_spelling_is_one_mailbox(author: str) -> None:
    feed = parse_feed(_atom(author))
    assert feed.contacts == [Contact(url="mailto:jane@x.org", network="email",
                                     source="atom:author")]


def test_feeds_contacts_mailto_strongest_source_wins_across_spellings() -> None:
    _, contacts = collect([("webMaster", Person(name="Jane", url="MAILTO:jane@x.org")),
                           ("itunes:owner", Person(name="Jane", email="mailto:JANE@x.org"))],
                          "Blog")
    assert contacts == [Contact(url="mailto:jane@x.org", network="email", source="itunes:owner")]


@pytest.mark.parametrize("uri", ["javascript:alert(1)", "data:text/html,x", "file:///etc/passwd"])
def test_feeds_contacts_mailto_a_uri_nobody_can_follow_is_not_a_contact(uri: str) -> None:
    feed = parse_feed(_atom(f"<uri>{uri}</uri><email>jane@x.org</email>"))
    assert [c.url for c in feed.contacts] == ["mailto:jane@x.org"]


def test_feeds_contacts_mailto_web_profiles_are_kept() -> None:
    feed = parse_feed(_atom("<uri>https://mastodon.social/@jane</uri>"))
    assert feed.contacts == [Contact(url="https://mastodon.social/@jane", network="mastodon",
                                     source="atom:author")]
