"""Entry identity when the id a feed gives does not tell its entries apart.

A link (or a guid falling back to its link) that entries with different enclosures share
identifies none of them: every one of them must still come out, each with an id of its own
that the next crawl gives it again. An entry really repeated, or republished under a new title
at the same link, is still one entry.
"""

from __future__ import annotations

from fairfetch.feeds import parse_feed


def _rss(*items: str) -> bytes:
    return ("<rss version='2.0'><channel><title>Show</title><link>https://show.test/</link>"
            + "".join(items) + "</channel></rss>").encode()


def _episode(n: int, guid: str = "") -> str:
    return (f"<item><title>Episode {n}</title>{guid}<link>https://show.test/</link>"
            f"<enclosure url='https://cdn.show.test/{n}.mp3' type='audio/mpeg' length='1'/>"
            f"<pubDate>Mon, 0{n} Jan 2024 10:00:00 GMT</pubDate></item>")


def test_feeds_identity_episodes_sharing_the_show_link_are_all_kept() -> None:
    feed = parse_feed(_rss(_episode(3), _episode(2), _episode(1)))
    assert [e.title for e in feed.entries] == ["Episode 3", "Episode 2", "Episode 1"]
    ids = [e.id for e in feed.entries]
    assert len(set(ids)) == 3
    assert "https://show.test/" not in ids
    assert not any("duplicate entry dropped" in p for p in feed.problems)


def test_feeds_identity_shared_link_ids_are_stable_across_crawls() -> None:
    first = {e.title: e.id for e in parse_feed(_rss(_episode(2), _episode(1))).entries}
    # a later crawl: a new episode on top, the order changed
    second = {e.title: e.id for e in parse_feed(_rss(_episode(3), _episode(1),
                                                     _episode(2))).entries}
    assert first["Episode 1"] == second["Episode 1"]
    assert first["Episode 2"] == second["Episode 2"]


def test_feeds_identity_shared_guid_and_shared_link_keeps_every_entry() -> None:
    guid = "<guid>https://show.test/</guid>"
    feed = parse_feed(_rss(_episode(2, guid), _episode(1, guid)))
    assert [e.title for e in feed.entries] == ["Episode 2", "Episode 1"]
    assert len({e.id for e in feed.entries}) == 2


def test_feeds_identity_a_real_repeat_behind_a_shared_link_is_still_dropped() -> None:
    feed = parse_feed(_rss(_episode(2), _episode(1), _episode(2)))
    assert [e.title for e in feed.entries] == ["Episode 2", "Episode 1"]
    assert any("duplicate entry dropped" in p for p in feed.problems)


def test_feeds_identity_unique_links_are_still_the_ids() -> None:
    a = "<item><title>a</title><link>https://show.test/a</link></item>"
    b = "<item><title>b</title><link>https://show.test/b</link></item>"
    assert [e.id for e in parse_feed(_rss(a, b)).entries] == ["https://show.test/a",
                                                              "https://show.test/b"]


def test_feeds_identity_a_retitled_post_at_the_same_link_is_still_one_entry() -> None:
    old = "<item><title>Draft title</title><link>https://show.test/post</link></item>"
    new = "<item><title>Final title</title><link>https://show.test/post</link></item>"
    feed = parse_feed(_rss(new, old))
    assert [(e.id, e.title) for e in feed.entries] == [("https://show.test/post", "Final title")]
