"""Mailboxes as bylines write them in the wild: a ``mailto:`` link with a query
(``?subject=…``), and addresses obfuscated against harvesters (``jane at example dot com``,
``jane [at] example [dot] com``, ``jane(at)example.com``). Each is one mailbox contact, and none
of the address's pieces becomes a person's name. In the other direction: a name that only
contains the word "at" ("Jane Doe at Example.com", "Editor at Large") is not an address."""

from __future__ import annotations

import pytest

from fairfetch.feeds import parse_feed
from fairfetch.feeds.model import Contact, Person
from fairfetch.feeds.people import parse_person


@pytest.mark.parametrize(("text", "expected"), [
    ("mailto:jane@example.com?subject=Hi", Person(email="jane@example.com")),
    ("MAILTO:jane@example.com?subject=Hi%20there&body=x", Person(email="jane@example.com")),
    ("Jane Doe <mailto:jane@example.com?subject=hi>",
     Person(name="Jane Doe", email="jane@example.com")),
    ("jane@example.com?subject=hi (Jane Doe)", Person(name="Jane Doe", email="jane@example.com")),
    ("Jane Doe (mailto:jane@example.com?subject=hi)",
     Person(name="Jane Doe", email="jane@example.com")),
])
def test_feeds_people_mailto_query_is_not_part_of_the_mailbox_or_the_name(
        text: str, expected: Person) -> None:
    assert parse_person(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("jane at example dot com", Person(email="jane@example.com")),
    ("jane [at] example [dot] com", Person(email="jane@example.com")),
    ("jane(at)example.com", Person(email="jane@example.com")),
    ("jane (at) example (dot) co (dot) uk", Person(email="jane@example.co.uk")),
    ("JANE {AT} EXAMPLE {DOT} COM", Person(email="JANE@EXAMPLE.COM")),
    ("jane.doe [at] mail.example.org (Jane Doe)",
     Person(name="Jane Doe", email="jane.doe@mail.example.org")),
    ("Ed Itor (ed at example dot com)", Person(name="Ed Itor", email="ed@example.com")),
    ("Ed Itor <ed[at]example[dot]com>", Person(name="Ed Itor", email="ed@example.com")),
])
def test_feeds_people_obfuscated_mailboxes_are_read(text: str, expected: Person) -> None:
    assert parse_person(text) == expected


@pytest.mark.parametrize("text", [
    "Jane Doe at Example.com", "Editor at Large", "Meet us at the Station", "Bob at home dot",
    "Notes at 5 dot 30", "Catherine Dotson", "Pat Attwood",
])
def test_feeds_people_names_with_at_are_not_addresses(text: str) -> None:
    assert parse_person(text) == Person(name=text)


def test_feeds_people_mailboxes_in_a_feed_become_contacts_not_names() -> None:
    doc = (b"<rss version='2.0'><channel><title>Notes</title>"
           b"<managingEditor>ed at example dot com (Ed Itor)</managingEditor>"
           b"<webMaster>mailto:web@example.com?subject=Feed</webMaster>"
           b"<item><guid>1</guid><author>jane [at] example [dot] com (Jane Doe)</author></item>"
           b"</channel></rss>")
    feed = parse_feed(doc)
    assert feed.authors == [Person(name="Ed Itor", email="ed@example.com")]
    assert feed.contacts == [Contact("mailto:ed@example.com", "email", "managingEditor"),
                             Contact("mailto:web@example.com", "email", "webMaster")]
    assert feed.entries[0].authors == [Person(name="Jane Doe", email="jane@example.com")]
