"""Audio a feed ships as ``media:content`` (``medium="audio"`` or an ``audio/`` type) is audio
evidence, as ``media:`` video content is video evidence: what the feed ships decides, not which
element carries it. The evidence says where it came from. In both directions: media:content
that is an image, or an audio rendition beside the video of a video item, is not."""

from __future__ import annotations

import pytest

from fairfetch.feeds import parse_feed
from fairfetch.feeds.classify import Signals, classify

_MEDIA = "http://search.yahoo.com/mrss/"


def _rss(items: str, channel_extra: str = "") -> bytes:
    return (f"<rss version='2.0' xmlns:media='{_MEDIA}'><channel><title>Show</title>"
            f"<link>https://show.example/</link>{channel_extra}{items}</channel></rss>").encode()


def _item(n: int, media: str) -> str:
    return f"<item><title>ep{n}</title><guid>ep-{n}</guid>{media}</item>"


@pytest.mark.parametrize("media", [
    "<media:content url='https://cdn.show.example/{n}.mp3' type='audio/mpeg' medium='audio'/>",
    "<media:content url='https://cdn.show.example/{n}' medium='audio'/>",
    "<media:content url='https://cdn.show.example/{n}.m4a' type='audio/x-m4a'/>",
    "<media:content url='https://cdn.show.example/{n}.mp3' type=' Audio/MPEG'/>",
    "<media:group><media:content url='https://cdn.show.example/{n}.mp3' type='audio/mpeg'/>"
    "<media:content url='https://cdn.show.example/{n}.ogg' type='audio/ogg'/></media:group>",
])
def test_feeds_media_audio_content_makes_a_podcast(media: str) -> None:
    feed = parse_feed(_rss(_item(1, media.format(n=1)) + _item(2, media.format(n=2))))
    assert feed.kind == "podcast"
    assert feed.kind_evidence[0] == "2 of 2 entries carry media: audio content"
    assert all(not e.enclosures for e in feed.entries)  # media:content stays apart


def test_feeds_media_audio_content_in_atom() -> None:
    doc = (f"<feed xmlns='http://www.w3.org/2005/Atom' xmlns:media='{_MEDIA}'><title>Show</title>"
           "<entry><id>urn:1</id><title>ep1</title>"
           "<media:content url='https://cdn.show.example/1.mp3' medium='audio'/></entry>"
           "</feed>").encode()
    feed = parse_feed(doc)
    assert (feed.kind, feed.kind_evidence) == (
        "podcast", ["1 of 1 entries carry media: audio content"])


def test_feeds_media_audio_counted_apart_from_audio_enclosures() -> None:
    items = (
        "<item><title>a</title><guid>a</guid>"
        "<enclosure url='https://cdn.show.example/a.mp3' type='audio/mpeg' length='1'/></item>"
        + _item(2, "<media:content url='https://cdn.show.example/b.mp3' medium='audio'/>")
        + "<item><title>c</title><guid>c</guid></item>")
    feed = parse_feed(_rss(items))
    assert feed.kind == "podcast"
    assert feed.kind_evidence[:2] == ["1 of 3 entries ship audio enclosures",
                                      "1 of 3 entries carry media: audio content"]


def test_feeds_media_audio_on_a_newsletter_platform_is_a_podcast_with_the_platform_named() -> None:
    feed = parse_feed(_rss(_item(1, "<media:content url='https://cdn.show.example/1.mp3' "
                                    "medium='audio'/>"),
                           "<generator>Substack</generator>"))
    assert feed.kind == "podcast"
    assert feed.kind_evidence == ["1 of 1 entries carry media: audio content",
                                  "hosted on substack (generator 'Substack')"]


@pytest.mark.parametrize("media", [
    "<media:content url='https://cdn.show.example/1.jpg' medium='image' type='image/jpeg'/>",
    "<media:content url='https://cdn.show.example/1.jpg'/>",
    "<media:thumbnail url='https://cdn.show.example/1.jpg'/>",
    "<media:content url='https://cdn.show.example/1.mp3' medium='document'/>",
])
def test_feeds_media_not_audio_is_no_evidence(media: str) -> None:
    feed = parse_feed(_rss(_item(1, media)))
    assert feed.kind == "blog"
    assert not any("media: audio" in e for e in feed.kind_evidence)


@pytest.mark.parametrize("item", [
    # an audio rendition in the group of a video item is an alternative of the video
    _item(1, "<media:group>"
             "<media:content url='https://cdn.show.example/1.mp4' type='video/mp4'/>"
             "<media:content url='https://cdn.show.example/1.m4a' type='audio/mp4'/>"
             "</media:group>"),
    "<item><title>v</title><guid>v</guid>"
    "<enclosure url='https://cdn.show.example/v.mp4' type='video/mp4' length='1'/>"
    "<media:content url='https://cdn.show.example/v.mp3' medium='audio'/></item>",
])
def test_feeds_media_audio_beside_video_stays_video(item: str) -> None:
    feed = parse_feed(_rss(item))
    assert feed.kind == "video"
    assert not any("media: audio" in e for e in feed.kind_evidence)


def test_feeds_media_audio_classify_signal_both_ways() -> None:
    assert classify(Signals(entries=2, media_audio_entries=1)) == (
        "podcast", ["1 of 2 entries carry media: audio content"])
    assert classify(Signals(entries=2))[0] == "blog"
    # podcast:medium stays the explicit statement
    assert classify(Signals(entries=2, media_audio_entries=2, podcast_medium="video"))[0] == (
        "video")


def test_feeds_media_audio_judged_per_entry() -> None:
    # the video enclosure of one entry does not make another entry's audio a rendition of it
    items = ("<item><title>v</title><guid>v</guid>"
             "<enclosure url='https://cdn.show.example/v.mp4' type='video/mp4' length='1'/></item>"
             + _item(2, "<media:content url='https://cdn.show.example/2.mp3' medium='audio'/>"))
    feed = parse_feed(_rss(items))
    assert (feed.kind, feed.kind_evidence[0]) == (
        "podcast", "1 of 2 entries carry media: audio content")
