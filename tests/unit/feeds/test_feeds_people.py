"""The person test, person strings, contact networks and source ordering."""

from __future__ import annotations

import pytest

from fairfetch.feeds.model import Contact, Person
from fairfetch.feeds.people import (
    SOURCE_ORDER,
    collect,
    is_person_name,
    network_of,
    parse_person,
    source_strength,
)


@pytest.mark.parametrize(("text", "expected"), [
    ("jane@x.org (Jane Doe)", Person("Jane Doe", "jane@x.org")),
    ("Jane Doe <jane@x.org>", Person("Jane Doe", "jane@x.org")),
    ("Jane Doe (mailto:jane@x.org)", Person("Jane Doe", "jane@x.org")),
    ("jane@x.org", Person(None, "jane@x.org")),
    ("mailto:jane@x.org", Person(None, "jane@x.org")),
    ("Jane Doe", Person("Jane Doe")),
    ("  Jane   Doe ", Person("Jane Doe")),
    ("", None),
])
def test_feeds_people_parse_person(text: str, expected: Person | None) -> None:
    assert parse_person(text) == expected


@pytest.mark.parametrize("name", ["Jane Doe", "Ada", "Émilie du Châtelet", "李小龙",
                                  "The Sunset Explorers", "Dr. Who"])
def test_feeds_people_person_names_kept(name: str) -> None:
    assert is_person_name(name, "Some Feed")


@pytest.mark.parametrize("name", [
    None, "", "Substack", "substack", "WordPress.com", "Ghost", "beehiiv", "Letterbox",
    "Editor", "The Editors", "Webmaster", "webmaster", "Admin", "Unknown", "noreply",
    "jane@x.org", "news@example.com (Newsroom)", "example.com", "https://x.org/",
    "Weekly Musings", "  weekly   musings ", "Substack Team",
])
def test_feeds_people_non_persons_rejected(name: str | None) -> None:
    assert not is_person_name(name, "Weekly Musings")


def test_feeds_people_mailbox_handle_is_not_a_person() -> None:
    assert not is_person_name("weeklymusings", None, "weeklymusings@substack.com")
    assert is_person_name("Jane Doe", None, "jane@x.org")


@pytest.mark.parametrize(("url", "network"), [
    ("mailto:a@b.org", "email"), ("https://twitter.com/jane", "x"), ("https://x.com/jane", "x"),
    ("https://bsky.app/profile/jane.bsky.social", "bluesky"), ("https://github.com/jane", "github"),
    ("https://mastodon.social/@jane", "mastodon"), ("https://social.example/@jane", "mastodon"),
    ("https://www.linkedin.com/in/jane", "linkedin"), ("https://www.youtube.com/@jane", "youtube"),
    ("https://jane.example/", "web"), ("acct:jane@social.example", "fediverse"),
])
def test_feeds_people_network_of(url: str, network: str) -> None:
    assert network_of(url) == network


def test_feeds_people_source_order_puts_itunes_owner_over_webmaster() -> None:
    assert source_strength("itunes:owner") < source_strength("managingEditor")
    assert source_strength("managingEditor") < source_strength("webMaster")
    assert source_strength("something-new") == len(SOURCE_ORDER)


def test_feeds_people_collect_keeps_contacts_of_non_persons_with_strongest_source() -> None:
    authors, contacts = collect([
        ("webMaster", Person("Webmaster", "pub@x.org")),
        ("itunes:owner", Person("My Feed", "PUB@x.org")),
        ("dc:creator", Person("Jane Doe", None, "https://mastodon.social/@jane")),
        ("atom:author", Person("Jane Doe", "jane@x.org")),
    ], feed_title="My Feed")
    assert authors == [Person("Jane Doe", "jane@x.org", "https://mastodon.social/@jane")]
    assert contacts == [
        Contact("mailto:pub@x.org", "email", "itunes:owner"),
        Contact("mailto:jane@x.org", "email", "atom:author"),
        Contact("https://mastodon.social/@jane", "mastodon", "dc:creator"),
    ]
    assert all(c.source for c in contacts)
