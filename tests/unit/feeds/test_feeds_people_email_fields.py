"""Elements that hold only a mailbox (itunes:email in itunes:owner, Atom's email, googleplay:email,
podcast:locked's owner) written as bylines are: "Jane Doe <jane@x.org>", "jane@x.org (Jane)",
"mailto:jane@x.org", obfuscated. The mailbox is read out of them: the owner's contact (the
strongest source there is) was lost, and Person.email held the whole text."""

from __future__ import annotations

import pytest

from fairfetch.feeds import parse_feed
from fairfetch.feeds.model import Contact, Person

OWNER_FORMS = ["jane@x.org", "Jane Doe <jane@x.org>", "jane@x.org (Jane)", "mailto:jane@x.org",
               "MAILTO:jane@x.org?subject=Show", "jane at x dot org", "jane[at]x.org",
               " <jane@x.org> "]


def _itunes(email: str) -> bytes:
    return ("<rss version='2.0' xmlns:itunes='http://www.itunes.com/dtds/podcast-1.0.dtd'>"
            "<channel><title>Show</title><itunes:owner><itunes:name>Jane Doe</itunes:name>"
            f"<itunes:email>{email.replace('<', '&lt;')}</itunes:email></itunes:owner>"
            "</channel></rss>").encode()


@pytest.mark.parametrize("email", OWNER_FORMS)
def test_feeds_people_itunes_owner_email_in_any_form(email: str) -> None:
    feed = parse_feed(_itunes(email))
    assert feed.contacts == [Contact("mailto:jane@x.org", "email", "itunes:owner")]
    assert feed.authors == [Person(name="Jane Doe", email="jane@x.org")]


@pytest.mark.parametrize("email", OWNER_FORMS)
def test_feeds_people_atom_email_in_any_form(email: str) -> None:
    doc = ("<feed xmlns='http://www.w3.org/2005/Atom'><title>F</title><author><name>Jane Doe"
           f"</name><email>{email.replace('<', '&lt;')}</email></author></feed>").encode()
    feed = parse_feed(doc)
    assert feed.contacts == [Contact("mailto:jane@x.org", "email", "atom:author")]
    assert feed.authors == [Person(name="Jane Doe", email="jane@x.org")]


@pytest.mark.parametrize("email", OWNER_FORMS)
def test_feeds_people_googleplay_and_locked_owner_in_any_form(email: str) -> None:
    text = email.replace("<", "&lt;")
    attr = email.replace("<", "&lt;").replace("'", "&apos;")
    doc = ("<rss version='2.0' xmlns:googleplay='http://www.google.com/schemas/play-podcasts/1.0'"
           " xmlns:podcast='https://podcastindex.org/namespace/1.0'><channel><title>S</title>"
           f"<googleplay:email>{text}</googleplay:email>"
           f"<podcast:locked owner='{attr}'>yes</podcast:locked></channel></rss>").encode()
    feed = parse_feed(doc)
    assert feed.contacts == [Contact("mailto:jane@x.org", "email", "googleplay:owner")]


def test_feeds_people_an_email_field_without_a_mailbox_is_no_contact() -> None:
    feed = parse_feed(_itunes("write to us via the website"))
    assert feed.contacts == []
    assert feed.authors == [Person(name="Jane Doe")]


@pytest.mark.parametrize(("text", "expected"), [
    ("émilie@example.com", Person(email="émilie@example.com")),
    ("zoë@example.com (Zoë Quinn)", Person(name="Zoë Quinn", email="zoë@example.com")),
    ("José Martí josé@exämple.de", Person(name="José Martí", email="josé@exämple.de")),
])
def test_feeds_people_internationalised_mailboxes_are_read_whole(
        text: str, expected: Person) -> None:
    doc = ("<rss version='2.0'><channel><title>S</title><managingEditor>" + text
           + "</managingEditor><item><guid>1</guid><author>" + text + "</author></item>"
           "</channel></rss>").encode()
    feed = parse_feed(doc)
    assert feed.entries[0].authors == [expected]
    assert feed.contacts == [Contact("mailto:" + str(expected.email), "email", "managingEditor")]
