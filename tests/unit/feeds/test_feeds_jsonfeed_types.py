"""JSON Feed fields with the wrong JSON type, as hand-written and templated feeds ship them: one
object where the spec wants a list (attachments, authors, hubs, items), one string for the tags,
numbers written as strings, a 1.0 ``author`` given as a plain string. Each is read for what it
plainly means and said in ``problems``: an episode's audio sent as a lone object was dropped
without a word, and the podcast classified a blog. A value that means nothing (a negative or
non-finite duration, a size that is no number) is None, as in RSS."""

from __future__ import annotations

import json
from typing import Any

import pytest

from fairfetch.feeds import parse_feed
from fairfetch.feeds.model import Contact, Enclosure, Person

V11 = "https://jsonfeed.org/version/1.1"


def _doc(items: Any, **top: Any) -> bytes:
    return json.dumps({"version": V11, "title": "Show", **top, "items": items}).encode()


def test_feeds_jsonfeed_a_lone_attachment_object_is_the_attachment() -> None:
    feed = parse_feed(_doc([{"id": "1", "attachments": {
        "url": "https://cdn.example.com/1.mp3", "mime_type": "audio/mpeg",
        "size_in_bytes": 1234}}]))
    assert feed.entries[0].enclosures == [
        Enclosure("https://cdn.example.com/1.mp3", "audio/mpeg", 1234)]
    assert feed.kind == "podcast"
    assert "attachments is an object, not a list: read as one" in feed.problems


def test_feeds_jsonfeed_numbers_written_as_strings() -> None:
    feed = parse_feed(_doc([{"id": "1", "attachments": [{
        "url": "https://cdn.example.com/1.mp3", "mime_type": "audio/mpeg",
        "size_in_bytes": "1234", "duration_in_seconds": "61.5"}]}]))
    assert feed.entries[0].enclosures == [
        Enclosure("https://cdn.example.com/1.mp3", "audio/mpeg", 1234)]
    assert feed.entries[0].duration == 61.5


@pytest.mark.parametrize("size", ["", "12 MB", "-5", -5, "1e3x", True, None, [1], 2**70])
def test_feeds_jsonfeed_sizes_that_mean_nothing_are_none(size: object) -> None:
    feed = parse_feed(_doc([{"id": "1", "attachments": [
        {"url": "https://cdn.example.com/1.mp3", "size_in_bytes": size}]}]))
    assert feed.entries[0].enclosures == [Enclosure("https://cdn.example.com/1.mp3")]


@pytest.mark.parametrize("duration", ["NaN", "Infinity", "-Infinity", -5, "-5", "x", True])
def test_feeds_jsonfeed_durations_that_mean_nothing_are_none(duration: object) -> None:
    raw = _doc([{"id": "1", "attachments": [
        {"url": "https://cdn.example.com/1.mp3", "duration_in_seconds": 0}]}])
    raw = raw.replace(b'"duration_in_seconds": 0', b'"duration_in_seconds": ' + (
        duration.encode() if duration in ("NaN", "Infinity", "-Infinity")
        else json.dumps(duration).encode()))
    feed = parse_feed(raw)
    assert feed.ok
    assert feed.entries[0].duration is None


def test_feeds_jsonfeed_tags_as_one_string_is_one_tag() -> None:
    feed = parse_feed(_doc([{"id": "1", "tags": "news"}]))
    assert feed.entries[0].categories == ["news"]
    assert "tags is a string, not a list: read as one" in feed.problems


def test_feeds_jsonfeed_authors_as_an_object_or_strings() -> None:
    feed = parse_feed(_doc(
        [{"id": "1", "authors": {"name": "Jane Doe", "url": "https://x.com/jane"}},
         {"id": "2", "author": "Ann Lee <ann@example.com>"},
         {"id": "3", "authors": ["Bo Park", {"name": "Cy Vance"}]}],
        authors={"name": "Jane Doe", "url": "mailto:jane@example.com?subject=Hi"}))
    assert [e.authors for e in feed.entries] == [
        [Person(name="Jane Doe", url="https://x.com/jane")],
        [Person(name="Ann Lee", email="ann@example.com")],
        [Person(name="Bo Park"), Person(name="Cy Vance")]]
    assert feed.authors == [Person(name="Jane Doe", email="jane@example.com")]
    assert feed.contacts == [Contact("mailto:jane@example.com", "email", "json:author")]
    assert "author is a string, not an object: read as a byline" in feed.problems
    assert "authors is an object, not a list: read as one" in feed.problems


def test_feeds_jsonfeed_a_lone_hub_object_and_a_lone_item_object() -> None:
    feed = parse_feed(_doc({"id": "1", "url": "https://example.com/1"},
                           hubs={"type": "WebSub", "url": "https://hub.example.com/"}))
    assert feed.hub_urls == ["https://hub.example.com/"]
    assert [e.id for e in feed.entries] == ["1"]
    assert "items is an object, not a list: read as one" in feed.problems


@pytest.mark.parametrize("items", ["x", 5, None, True])
def test_feeds_jsonfeed_items_that_are_no_items_are_said(items: object) -> None:
    feed = parse_feed(_doc(items))
    assert feed.ok
    assert feed.entries == []
    if items is not None:
        assert "items is not a list" in feed.problems
