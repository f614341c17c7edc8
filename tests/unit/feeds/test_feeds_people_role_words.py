"""Bylines made only of role words ("Podcast Host", "Unknown Author", "Editor & Publisher",
"Help Desk") name a role, not a person (DESIGN.md: the person test rejects role names), however
many of them there are; one word that is not a role ("Hal Host", "Jane Editor", "Hope Press")
keeps the name a person's."""

from __future__ import annotations

import pytest

from fairfetch.feeds import parse_feed
from fairfetch.feeds.model import Contact
from fairfetch.feeds.people import is_person_name


@pytest.mark.parametrize("name", [
    "Podcast Host", "Guest Host", "Unknown Author", "Blog Admin", "Press Office", "Help Desk",
    "Anonymous Contributor", "Guest Contributor", "Newsletter Editor", "The Blog Editor",
    "Editor & Publisher", "Editor and Publisher", "Host Podcast", "Feed Admin",
    "Blog-Admin", "PODCAST HOST", "Editors of the Blog",
])
def test_feeds_people_role_words_only_are_no_person(name: str) -> None:
    assert not is_person_name(name, "Some Feed")


@pytest.mark.parametrize("name", [
    "Hal Host", "Jane Editor", "Hope Press", "Bob Admin", "Tim Team", "Ann Support",
    "Editor Jane Smith", "The Sunset Explorers", "Marketing Jones",
])
def test_feeds_people_one_word_that_is_no_role_keeps_a_person(name: str) -> None:
    assert is_person_name(name, "Some Feed")


def test_feeds_people_role_words_byline_is_a_contact_not_an_author() -> None:
    doc = (b"<rss version='2.0'><channel><title>Notes</title>"
           b"<managingEditor>desk@example.com (Newsletter Editor)</managingEditor>"
           b"<item><guid>1</guid><author>host@example.com (Podcast Host)</author></item>"
           b"</channel></rss>")
    feed = parse_feed(doc)
    assert feed.authors == []
    assert feed.contacts == [Contact("mailto:desk@example.com", "email", "managingEditor")]
    assert [(p.name, p.email) for p in feed.entries[0].authors] == [(None, "host@example.com")]
