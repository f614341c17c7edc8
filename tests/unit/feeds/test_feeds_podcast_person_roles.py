"""podcast:person roles (the Podcast Taxonomy Project's, which the namespace refers to): the
show's hosts, co-hosts and credited makers are its people; a guest is not an author, of the show
or of the episode they appear in. The role is matched whatever its case, spacing or hyphen
("Co-Host", "cohost", " host "); no role means host (the namespace's default)."""

from __future__ import annotations

import pytest

from fairfetch.feeds import parse_feed
from fairfetch.feeds.model import Contact, Person

NS = (b"xmlns:podcast='https://podcastindex.org/namespace/1.0'")


def _feed(channel: bytes, item: bytes = b"") -> bytes:
    return (b"<rss version='2.0' " + NS + b"><channel><title>The Show</title>" + channel
            + b"<item><guid>e1</guid><title>Episode</title>" + item + b"</item></channel></rss>")


@pytest.mark.parametrize("role", ["Co-Host", "co-host", "cohost", "Co Host", " Host ", "HOST"])
def test_feeds_podcast_person_co_hosts_are_the_shows_people(role: str) -> None:
    feed = parse_feed(_feed(
        b"<podcast:person role='" + role.encode() + b"' group='cast' "
        b"href='https://mastodon.social/@cora'>Cora Cohost</podcast:person>"))
    assert feed.authors == [Person(name="Cora Cohost", url="https://mastodon.social/@cora")]
    assert feed.contacts == [Contact("https://mastodon.social/@cora", "mastodon",
                                     "podcast:person")]


def test_feeds_podcast_person_guests_are_not_the_episodes_authors() -> None:
    feed = parse_feed(_feed(b"", (
        b"<podcast:person role='guest' href='https://x.com/gus'>Gus Guest</podcast:person>"
        b"<podcast:person>Hal Host</podcast:person>"
        b"<podcast:person role='Co-Host'>Cora Cohost</podcast:person>"
        b"<podcast:person role='Guest Host'>Gina Sub</podcast:person>"
        b"<podcast:person group='visuals' role='Cover Art Designer'>Ann Art</podcast:person>")))
    assert feed.entries[0].authors == [
        Person(name="Hal Host"), Person(name="Cora Cohost"), Person(name="Gina Sub")]


def test_feeds_podcast_person_guests_are_not_the_shows_people() -> None:
    feed = parse_feed(_feed(
        b"<podcast:person role='guest' href='https://x.com/gus'>Gus Guest</podcast:person>"
        b"<podcast:person role='Guest Host'>Gina Sub</podcast:person>"
        b"<podcast:person>Hal Host</podcast:person>"))
    assert feed.authors == [Person(name="Hal Host")]
    assert feed.contacts == []
