"""What an enclosure is, for classification: its MIME type when it names a medium, else the
file's extension. Podcast hosts that serve episodes as ``application/octet-stream`` (or write
a bare ``mp3`` in ``type``) still ship audio: the feed is a podcast, not a blog."""

from __future__ import annotations

import pytest

from fairfetch.feeds import parse_feed


def _feed(url: str, mime: str) -> bytes:
    return (f"<rss version='2.0'><channel><title>Show</title><link>https://s.test/</link>"
            f"<item><title>Ep 1</title><guid>ep1</guid><enclosure url='{url}' type='{mime}' "
            f"length='1'/></item></channel></rss>").encode()


@pytest.mark.parametrize(("url", "mime", "kind"), [
    ("https://cdn.s.test/ep1.mp3", "application/octet-stream", "podcast"),
    ("https://cdn.s.test/ep1.m4a?ref=feed", "binary/octet-stream", "podcast"),
    ("https://cdn.s.test/ep1.mp3", "mp3", "podcast"),
    ("https://cdn.s.test/ep1.ogg", "application/ogg", "podcast"),
    ("https://cdn.s.test/ep1", " audio/mpeg", "podcast"),
    ("https://cdn.s.test/ep1.mp4", "application/octet-stream", "video"),
    ("https://cdn.s.test/ep1", " Video/MP4", "video"),
])
def test_feeds_enclosure_kinds_untyped_media_is_known_by_its_extension(
        url: str, mime: str, kind: str) -> None:
    assert parse_feed(_feed(url, mime)).kind == kind


@pytest.mark.parametrize(("url", "mime"), [
    ("https://cdn.s.test/report.pdf", "application/octet-stream"),
    ("https://cdn.s.test/ep1.mp3", "image/jpeg"),  # the type names a medium: it wins
    ("https://cdn.s.test/file", "application/octet-stream"),
])
def test_feeds_enclosure_kinds_other_files_do_not_make_a_podcast(url: str, mime: str) -> None:
    assert parse_feed(_feed(url, mime)).kind == "blog"
