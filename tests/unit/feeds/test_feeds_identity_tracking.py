"""An entry without a guid is identified by its link, and many publishers' links carry tracking
parameters that change from one fetch to the next (a campaign named after the day, a mailing's
ids, a click id): the same post must keep its id across crawls, or every crawl stores it again
(and mails it again). The tracking parameters are left out of the id only; the link stays as
published, and parameters that choose the page (``?p=12``, ``?id=``) still tell posts apart."""

from __future__ import annotations

import pytest

from fairfetch.feeds import parse_feed


def _rss(link: str) -> bytes:
    return (b"<rss version='2.0'><channel><title>Blog</title><link>https://blog.example.com/"
            b"</link><item><title>Post</title><link>" + link.replace("&", "&amp;").encode()
            + b"</link></item></channel></rss>")


@pytest.mark.parametrize(("first", "second"), [
    ("https://blog.example.com/post?utm_source=rss&utm_medium=rss&utm_campaign=2024-05-01",
     "https://blog.example.com/post?utm_source=rss&utm_medium=rss&utm_campaign=2024-05-02"),
    ("https://blog.example.com/post?utm_source=feedburner",
     "https://blog.example.com/post"),
    ("https://blog.example.com/?p=12&utm_campaign=a&mc_cid=1a2b&mc_eid=3c4d",
     "https://blog.example.com/?mc_cid=9z&p=12&mc_eid=8y"),
    ("https://blog.example.com/post?fbclid=abc#comments",
     "https://blog.example.com/post?gclid=def#comments"),
    ("https://blog.example.com/post?UTM_Source=rss", "https://blog.example.com/post?_hsenc=x"),
])
def test_feeds_identity_tracking_parameters_leave_the_id_alone(first: str, second: str) -> None:
    a, b = parse_feed(_rss(first)), parse_feed(_rss(second))
    assert a.entries[0].id == b.entries[0].id
    assert a.entries[0].link == first  # the link as published
    assert b.entries[0].link == second


@pytest.mark.parametrize(("first", "second"), [
    ("https://blog.example.com/?p=12&utm_source=rss", "https://blog.example.com/?p=13&utm_source=rss"),
    ("https://blog.example.com/post?id=1", "https://blog.example.com/post?id=2"),
    ("https://blog.example.com/post?utm=1", "https://blog.example.com/post?utm=2"),
    ("https://blog.example.com/a?utm_source=x", "https://blog.example.com/b?utm_source=x"),
])
def test_feeds_identity_other_parameters_still_tell_posts_apart(first: str, second: str) -> None:
    assert parse_feed(_rss(first)).entries[0].id != parse_feed(_rss(second)).entries[0].id


def test_feeds_identity_tracking_id_is_the_clean_link() -> None:
    feed = parse_feed(_rss("https://blog.example.com/?p=12&utm_source=rss&utm_medium=rss"))
    assert feed.entries[0].id == "https://blog.example.com/?p=12"


def test_feeds_identity_a_guid_is_kept_as_written() -> None:
    doc = (b"<rss version='2.0'><channel><title>Blog</title><item><title>Post</title>"
           b"<guid>https://blog.example.com/post?utm_source=rss</guid></item></channel></rss>")
    assert parse_feed(doc).entries[0].id == "https://blog.example.com/post?utm_source=rss"


def test_feeds_identity_tracking_variants_in_one_document_are_one_entry() -> None:
    doc = (b"<rss version='2.0'><channel><title>Blog</title>"
           b"<item><title>Post</title><link>https://blog.example.com/p?utm_source=a</link></item>"
           b"<item><title>Post</title><link>https://blog.example.com/p?utm_source=b</link></item>"
           b"</channel></rss>")
    feed = parse_feed(doc)
    assert [e.id for e in feed.entries] == ["https://blog.example.com/p"]


def test_feeds_identity_a_guid_repeated_with_retagged_links_stays_the_id() -> None:
    # the same post twice in one document, its link tagged two ways: one entry, still named by
    # its guid (a guid "shared by different entries" would fall back to the link, and the id
    # would change on the next crawl that lists the post once)
    doc = (b"<rss version='2.0'><channel><title>Blog</title>"
           b"<item><guid>post-1</guid><title>Post</title>"
           b"<link>https://blog.example.com/p?utm_source=a</link></item>"
           b"<item><guid>post-1</guid><title>Post</title>"
           b"<link>https://blog.example.com/p?utm_source=b</link></item>"
           b"</channel></rss>")
    assert [e.id for e in parse_feed(doc).entries] == ["post-1"]
