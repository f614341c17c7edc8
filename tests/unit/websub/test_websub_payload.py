"""Which delivery bodies name entries (YouTube style) and which are ordinary pings."""

from __future__ import annotations

from datetime import UTC, datetime

from fairfetch.websub.payload import read_payload

YT = b"""<?xml version='1.0' encoding='UTF-8'?>
<feed xmlns:yt="http://www.youtube.com/xml/schemas/2015" xmlns="http://www.w3.org/2005/Atom">
 <link rel="hub" href="https://pubsubhubbub.appspot.com"/>
 <title>YouTube video feed</title>
 <entry>
  <id>yt:video:VID1</id>
  <yt:videoId>VID1</yt:videoId>
  <yt:channelId>CHAN</yt:channelId>
  <published>2015-03-06T21:40:57+00:00</published>
  <updated>2015-03-09T19:05:24.552394234+00:00</updated>
 </entry>
</feed>"""

TOMBSTONE = b"""<feed xmlns:at="http://purl.org/atompub/tombstones/1.0"
 xmlns="http://www.w3.org/2005/Atom">
 <at:deleted-entry ref="yt:video:VID1" when="2015-03-09T19:05:24.552394234+00:00"/></feed>"""


def test_websub_youtube_payload_names_entry() -> None:
    p = read_payload(YT)
    assert p.names_entries
    (e,) = p.named
    assert e.entry_id == "yt:video:VID1"
    assert e.published == datetime(2015, 3, 6, 21, 40, 57, tzinfo=UTC)
    assert e.updated is not None
    assert e.updated.date().isoformat() == "2015-03-09"


def test_websub_video_id_without_atom_id() -> None:
    body = YT.replace(b"<id>yt:video:VID1</id>", b"")
    assert read_payload(body).named[0].entry_id == "yt:video:VID1"


def test_websub_tombstone_names_deleted_entry() -> None:
    p = read_payload(TOMBSTONE)
    assert p.deleted == ("yt:video:VID1",)
    assert p.names_entries
    assert not p.named


def test_websub_ordinary_fat_ping_does_not_name_entries() -> None:
    fat = b"""<feed xmlns="http://www.w3.org/2005/Atom"><title>blog</title>
<entry><id>tag:x,1</id><title>post</title><updated>2026-01-01T00:00:00Z</updated></entry></feed>"""
    assert not read_payload(fat).names_entries


def test_websub_garbage_is_ordinary() -> None:
    for body in (b"", b"ping", b"<html><body>hi</body></html>", b"<feed", b"\xff\xfe<"):
        assert not read_payload(body).names_entries
