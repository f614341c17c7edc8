"""parse_feed behaviour: the contract the crawler and the acceptance checks rely on."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from fairfetch.feeds import parse_feed

from .conftest import CASES

RSS = b"""<?xml version="1.0" encoding="utf-8"?>
<rss version="2.0"><channel><title>T</title><link>https://ex.test/</link>
<item><title>One</title><link>/p/1</link><guid>g1</guid>
<pubDate>Sun, 19 May 2002 15:21:36 GMT</pubDate></item></channel></rss>"""


def _case(name: str, ext: str = "xml") -> bytes:
    return (CASES / f"{name}.feed.{ext}").read_bytes()


def test_feeds_parse_rss20_minimal() -> None:
    feed = parse_feed(RSS, "https://ex.test/feed")
    assert feed.ok
    assert feed.format == "rss20"
    (entry,) = feed.entries
    assert entry.id == "g1"
    assert entry.link == "https://ex.test/p/1"
    assert entry.published == datetime(2002, 5, 19, 15, 21, 36, tzinfo=UTC)


# --- DESIGN.md acceptance: classification ------------------------------------------------------

def test_feeds_parse_newsletter_with_itunes_owner_and_image_enclosures_is_a_newsletter() -> None:
    feed = parse_feed(_case("newsletter_itunes_owner_images"),
                      "https://weeklymusings.substack.com/feed")
    assert feed.kind == "newsletter"
    assert any("substack" in e for e in feed.kind_evidence)
    assert any("itunes:owner" in e and "not a podcast" in e for e in feed.kind_evidence)
    assert any("image enclosures" in e for e in feed.kind_evidence)
    # the owner's mailbox is kept as a contact with its source; the publication's own name
    # ("Weekly Musings", also the itunes:owner name) is not a person
    assert feed.contacts[0].source == "itunes:owner"
    assert all(p.name != "Weekly Musings" for p in feed.authors)


def test_feeds_parse_declared_show_without_episodes_is_a_podcast() -> None:
    feed = parse_feed(_case("declared_show_no_episodes"))
    assert feed.entries == []
    assert feed.kind == "podcast"
    assert "declared show without episodes yet" in feed.kind_evidence


def test_feeds_parse_itunes_owner_alone_is_not_a_podcast() -> None:
    doc = b"""<rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd">
    <channel><title>Plain</title><link>https://plain.test/</link>
    <itunes:owner><itunes:name>Kim Lee</itunes:name><itunes:email>k@plain.test</itunes:email>
    </itunes:owner><item><title>a</title><link>https://plain.test/a</link></item></channel></rss>"""
    feed = parse_feed(doc)
    assert feed.kind == "blog"
    assert any("itunes:owner" in e for e in feed.kind_evidence)


def test_feeds_parse_letterbox_by_header_alone() -> None:
    doc = b"""<rss version="2.0"><channel><title>Notes</title><link>https://n.example/</link>
    <item><title>a</title><guid>a</guid></item></channel></rss>"""
    assert parse_feed(doc, "https://n.example/feed", {"X-Platform": "letterbox"}).kind == \
        "newsletter"
    assert parse_feed(doc, "https://n.example/feed", {}).kind == "blog"


# --- never raises; not a feed ------------------------------------------------------------------

@pytest.mark.parametrize("data", [
    b"", b"   ", b"\x00\x01\x02", b"<", b"<rss", b"{", b"[]", b"null", b'{"items": 5}',
    b"<?xml version='1.0' encoding='nonsense'?><rss/>", "<rss>\u00e9</rss>".encode("utf-16"),
    b"<rss version='2.0'><channel><item><enclosure url='x' length='-5'/></item></channel></rss>",
    b"<" * 100_000, b"<a>" * 5000,
])
def test_feeds_parse_never_raises(data: bytes) -> None:
    feed = parse_feed(data)
    assert isinstance(feed.problems, list)
    assert all(e.id for e in feed.entries)


def test_feeds_parse_html_is_not_a_feed() -> None:
    feed = parse_feed(_case("broken_html_page"), "https://x.test/", {"Content-Type": "text/html"})
    assert not feed.ok
    assert "not a feed" in feed.problems
    assert feed.entries == []


def test_feeds_parse_billion_laughs_is_bounded_and_keeps_the_entries() -> None:
    feed = parse_feed(_case("broken_billion_laughs"))
    assert feed.ok
    assert [e.id for e in feed.entries] == ["lol-1"]
    assert "DTD entity declarations ignored" in feed.problems
    assert "lollol" not in (feed.title or "")
    assert all("lollol" not in (e.summary or "") for e in feed.entries)


def test_feeds_parse_external_entities_are_never_resolved() -> None:
    feed = parse_feed(_case("broken_xxe"))
    assert "root:" not in (feed.title or "")
    assert all("root:" not in (e.title or "") for e in feed.entries)


# --- identity ----------------------------------------------------------------------------------

def _items(*items: str) -> bytes:
    return ("<rss version='2.0'><channel><title>I</title><link>https://i.test/</link>"
            + "".join(items) + "</channel></rss>").encode()


A = "<item><title>a</title><guid>ga</guid><link>https://i.test/a</link></item>"
B = "<item><title>b</title><link>https://i.test/b</link></item>"
C = "<item><title>c only</title><description>x</description></item>"


def test_feeds_parse_ids_are_stable_when_entries_are_reordered() -> None:
    first = {e.title: e.id for e in parse_feed(_items(A, B, C)).entries}
    second = {e.title: e.id for e in parse_feed(_items(C, A, B)).entries}
    assert first == second
    assert first["a"] == "ga"
    assert first["b"] == "https://i.test/b"
    assert first["c only"].startswith("hash:")


def test_feeds_parse_republished_entry_is_not_duplicated() -> None:
    feed = parse_feed(_items(A, B, A))
    assert [e.id for e in feed.entries] == ["ga", "https://i.test/b"]
    assert any("duplicate entry dropped" in p for p in feed.problems)


def test_feeds_parse_shared_guid_falls_back_to_link_for_all_sharers() -> None:
    x = "<item><guid>same</guid><link>https://i.test/x</link></item>"
    y = "<item><guid>same</guid><link>https://i.test/y</link></item>"
    assert [e.id for e in parse_feed(_items(x, y)).entries] == ["https://i.test/x",
                                                                 "https://i.test/y"]


def test_feeds_parse_hash_id_ignores_summary_edits_when_title_exists() -> None:
    one = parse_feed(_items("<item><title>t</title><description>v1</description></item>"))
    two = parse_feed(_items("<item><title>t</title><description>v2</description></item>"))
    assert one.entries[0].id == two.entries[0].id


# --- schedule hints, moves, WebSub -------------------------------------------------------------

@pytest.mark.parametrize(("channel", "seconds"), [
    ("<ttl>60</ttl>", 3600.0),
    ("<sy:updatePeriod>hourly</sy:updatePeriod><sy:updateFrequency>2</sy:updateFrequency>", 1800.0),
    ("<sy:updatePeriod>weekly</sy:updatePeriod>", 604800.0),
    ('<podcast:updateFrequency rrule="FREQ=DAILY;INTERVAL=2">x</podcast:updateFrequency>',
     172800.0),
    ("<podcast:updateFrequency>Biweekly</podcast:updateFrequency>", 1209600.0),
    ("<ttl>soon</ttl>", None),
    ("", None),
])
def test_feeds_parse_ttl_hint(channel: str, seconds: float | None) -> None:
    doc = ('<rss version="2.0" xmlns:sy="http://purl.org/rss/1.0/modules/syndication/" '
           'xmlns:podcast="https://podcastindex.org/namespace/1.0"><channel><title>x</title>'
           f"{channel}</channel></rss>").encode()
    assert parse_feed(doc).ttl_hint == seconds


def test_feeds_parse_new_feed_url_and_websub_links() -> None:
    feed = parse_feed(_case("podcast_itunes"))
    assert feed.new_feed_url == "https://new.example.com/hiking.xml"
    full = parse_feed(_case("rss20_full"), "https://liftoff.example.org/rss.xml")
    assert full.hub_urls == ["https://hub.example.net/"]
    assert full.self_url == "https://liftoff.example.org/rss.xml"
    assert full.next_url == "https://liftoff.example.org/rss.xml?page=2"


def test_feeds_parse_link_header_hub_comes_first_and_self_wins() -> None:
    feed = parse_feed(_case("rss20_full"), "https://liftoff.example.org/rss.xml",
                      {"Link": '<https://other-hub.test/>; rel="hub", '
                               '<https://liftoff.example.org/canonical.xml>; rel="self"'})
    assert feed.hub_urls == ["https://other-hub.test/", "https://hub.example.net/"]
    assert feed.self_url == "https://liftoff.example.org/canonical.xml"


def test_feeds_parse_relative_urls_resolve_against_redirect_target() -> None:
    feed = parse_feed(_case("redirect_target_base"), "https://new-home.example.com/feeds/main.xml")
    (entry,) = feed.entries
    assert entry.link == "https://new-home.example.com/feeds/posts/1"
    assert entry.enclosures[0].url == "https://new-home.example.com/media/1.mp3"


def test_feeds_parse_xml_base_wins_over_document_url() -> None:
    feed = parse_feed(_case("atom10_full"), "https://elsewhere.test/feed")
    assert feed.link == "https://example.org/blog/"
    assert feed.entries[1].link == "https://other.example.net/post/2"


def test_feeds_parse_unparseable_date_is_none_and_noted() -> None:
    feed = parse_feed(_case("broken_dates"))
    by_id = {e.id: e for e in feed.entries}
    assert by_id["d9"].published is None
    assert any("sometime last week" in p for p in feed.problems)
    assert by_id["d1"].published == datetime(2003, 6, 3, 17, 39, tzinfo=UTC)


# --- large CDATA bodies are lifted out before parsing and restored exactly ---------------------

def test_feeds_parse_large_cdata_body_restored_exactly() -> None:
    body = "<p>caf\u00e9 \u201cq\u201d & <b>bold</b></p>\n" * 200  # > 1 KB
    doc = ("<rss version='2.0' xmlns:content='http://purl.org/rss/1.0/modules/content/'>"
           "<channel><title>L</title><item><title>t</title><guid>g</guid>"
           f"<description>intro <![CDATA[{body}]]> outro</description>"
           f"<content:encoded><![CDATA[{body}]]></content:encoded></item></channel></rss>")
    (entry,) = parse_feed(doc.encode()).entries
    assert entry.content == body.strip()
    assert entry.summary == ("intro " + body + " outro").strip()
    assert "\ue000" not in (entry.content + entry.summary)


def test_feeds_parse_large_cdata_in_mis_declared_cp1252_is_still_read_as_cp1252() -> None:
    body = "\u201cquoted\u201d caf\u00e9 " * 100
    doc = ('<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel><title>W</title>'
           f"<item><guid>g</guid><description><![CDATA[{body}]]></description></item>"
           "</channel></rss>").encode("cp1252")
    feed = parse_feed(doc)
    assert feed.encoding == "cp1252"
    assert feed.entries[0].summary == body.strip()


def test_feeds_parse_no_nul_reaches_the_model() -> None:
    body = "x\x00y\x0c" + "z" * 2000
    rss = ("<rss version='2.0'><channel><title>N</title><item><guid>g</guid>"
           f"<description><![CDATA[{body}]]></description></item></channel></rss>").encode()
    assert "\x00" not in (parse_feed(rss).entries[0].summary or "")
    js = (b'{"version": "https://jsonfeed.org/version/1.1", "title": "a\\u0000b\\ud800",'
          b' "items": [{"id": "1\\u0000"}]}')
    feed = parse_feed(js)
    assert feed.title is not None
    assert "\x00" not in feed.title
    feed.title.encode()
    assert feed.entries[0].id == "1"


def test_feeds_parse_fast_entry_constructor_matches_the_model() -> None:
    import dataclasses

    from fairfetch.feeds._build import ENTRY_FIELDS, _entry
    from fairfetch.feeds.model import Entry

    assert tuple(f.name for f in dataclasses.fields(Entry)) == ENTRY_FIELDS
    values: tuple[Any, ...] = ("i", "t", "l", None, None, "s", "c", [], ["x"], [], None, [], 1.0,
                               [])
    made = _entry(values)
    assert made == Entry(*values)
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.title = "other"  # type: ignore[misc]


def test_feeds_parse_reused_parser_carries_no_errors_into_the_next_document() -> None:
    broken = b"<rss version='2.0'><channel><title>B</title><item><guid>g</guid></channel></rss>"
    clean = (b"<rss version='2.0'><channel><title>C</title><item><guid>g</guid></item>"
             b"</channel></rss>")
    assert any("malformed" in p for p in parse_feed(broken).problems)
    assert not any("malformed" in p for p in parse_feed(clean).problems)


def test_feeds_a_blank_xml_base_keeps_the_document_base() -> None:
    """``xml:base="  "`` names no base: links resolve against the feed URL, not stay relative."""
    doc = (b'<feed xmlns="http://www.w3.org/2005/Atom" xml:base="  "><title>t</title>'
           b'<entry><id>1</id><link href="p.html"/></entry></feed>')
    [entry] = parse_feed(doc, "https://example.com/blog/feed.xml").entries
    assert entry.link == "https://example.com/blog/p.html"
