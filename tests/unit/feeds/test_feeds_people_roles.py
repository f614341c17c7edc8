"""The person test against organisation and role names that only look like names ("Admin Team",
"Substack Inc.") and against the feed's own title written with other punctuation or case, in
both directions: a real name that shares a word with them is still a person."""

from __future__ import annotations

import pytest

from fairfetch.feeds import parse_feed
from fairfetch.feeds.model import Contact
from fairfetch.feeds.people import is_person_name


@pytest.mark.parametrize("name", [
    "Admin Team", "Support Team", "The Support Team", "Editorial Team", "Marketing Department",
    "The Editors", "Substack Inc.", "Substack, Inc.", "Substack Inc", "Ghost Ltd",
    "WordPress.com Staff", "Podbean Team", "The Buzzsprout Team", "Admin Team Inc.",
    "Sales Dept.", "Team Inc.", "The Newsroom Staff", "Info Team",
])
def test_feeds_people_roles_rejected(name: str) -> None:
    assert not is_person_name(name, "Some Feed")


@pytest.mark.parametrize("name", [
    "Tim Team", "Jane Staff", "Ann Support", "Bob Admin", "Inc Jones", "The Sunset Explorers",
    "The Editors' Friend Jane", "Ted Co", "Alice Department", "Staff Sergeant Ray",
    "Jane Doe Inc.", "Acme Team",
])
def test_feeds_people_roles_real_names_kept(name: str) -> None:
    # a word that can end a team's or a company's name does not make a role of a first name
    # or of a name that is no role or platform
    assert is_person_name(name, "Some Feed")


@pytest.mark.parametrize(("name", "title"), [
    ("Morning Brew!", "Morning Brew"), ("Morning Brew", "Morning Brew!"),
    ("MORNING BREW", "Morning Brew"), ("Morning-Brew", "Morning Brew"),
    ("Morning Brew.", "morning brew"), ("Jane's Notes", "Jane’s Notes"),
    ("Jane’s Notes", "Janes Notes"), ("« Morning Brew »", "Morning Brew"),
])
def test_feeds_people_roles_feed_title_whatever_its_punctuation(name: str, title: str) -> None:
    assert not is_person_name(name, title)


@pytest.mark.parametrize(("name", "title"), [
    ("Morning Brewer", "Morning Brew"), ("Jane Doe", "Jane Doe's Notes"),
    ("Brew Morning", "Morning Brew"), ("Jane Doe", "!!!"),
])
def test_feeds_people_roles_other_names_than_the_title_kept(name: str, title: str) -> None:
    assert is_person_name(name, title)


def test_feeds_people_roles_contact_kept_name_not_an_author() -> None:
    doc = (b"<rss version='2.0'><channel><title>Morning Brew</title>"
           b"<managingEditor>hello@brew.example (Morning Brew!)</managingEditor>"
           b"<webMaster>ops@brew.example (Admin Team)</webMaster>"
           b"<author>legal@brew.example (Substack Inc.)</author></channel></rss>")
    feed = parse_feed(doc)
    assert feed.authors == []
    assert feed.contacts == [
        Contact("mailto:hello@brew.example", "email", "managingEditor"),
        Contact("mailto:legal@brew.example", "email", "author"),
        Contact("mailto:ops@brew.example", "email", "webMaster"),
    ]
