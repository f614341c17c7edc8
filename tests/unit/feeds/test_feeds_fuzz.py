"""parse_feed never raises: arbitrary bytes and mutated real feeds (hypothesis).

Time is bounded by hypothesis's own deadline per example, not by wall-clock assertions.
"""

from __future__ import annotations

import dataclasses
import json
from datetime import timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairfetch.feeds import parse_feed
from fairfetch.feeds.discover import find_feed_links, hub_and_self_from_link_header

from .conftest import case_inputs

SEEDS = [p.read_bytes() for p in case_inputs()]
FUZZ = settings(max_examples=150, deadline=timedelta(seconds=2),
                suppress_health_check=[HealthCheck.too_slow])


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [s for f in dataclasses.fields(value) for s in _strings(getattr(value, f.name))]
    if isinstance(value, list | tuple):
        return [s for v in value for s in _strings(v)]
    return []


def _check(data: bytes, url: str | None = None, headers: dict[str, str] | None = None) -> None:
    feed = parse_feed(data, url, headers)
    for text in _strings(feed):  # what a store must be able to bind (PostgreSQL refuses NUL)
        assert "\x00" not in text
        text.encode("utf-8")
    assert isinstance(feed.ok, bool)
    # parse_feed's last-resort catch keeps the crawler alive, but a bug it catches costs the
    # whole feed: no input may reach it.
    assert not [p for p in feed.problems if p.startswith("internal parser error")]
    ids = [e.id for e in feed.entries]
    assert all(ids)
    assert len(ids) == len(set(ids))
    if not feed.ok:
        assert feed.problems


@FUZZ
@given(st.binary(max_size=4096))
def test_feeds_fuzz_arbitrary_bytes(data: bytes) -> None:
    _check(data)


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    data = bytearray(draw(st.sampled_from(SEEDS)))
    for _ in range(draw(st.integers(1, 8))):
        op = draw(st.integers(0, 3))
        pos = draw(st.integers(0, max(0, len(data) - 1)))
        if op == 0 and data:  # flip a byte
            data[pos] = draw(st.integers(0, 255))
        elif op == 1:  # insert bytes
            data[pos:pos] = draw(st.binary(max_size=16))
        elif op == 2:  # delete a span
            del data[pos:pos + draw(st.integers(0, 64))]
        else:  # splice in markup-ish text
            data[pos:pos] = draw(st.sampled_from(
                [b"<", b">", b"&", b"]]>", b"<![CDATA[", b"<item>", b"</channel>", b"&#0;",
                 b"&#xD800;", b"\x00", b"\xff\xfe", b'<?xml version="1.0" encoding="utf-16"?>']))
    return bytes(data)


@FUZZ
@given(mutated(), st.sampled_from([None, "https://x.test/feed", "not a url", "http://[::1"]),
       st.sampled_from([None, {"Content-Type": "text/xml; charset=bogus"},
                        {"Link": "<>; rel=hub, <x"}, {"content-type": "text/html"}]))
def test_feeds_fuzz_mutated_real_feeds(data: bytes, url: str | None,
                                       headers: dict[str, str] | None) -> None:
    _check(data, url, headers)


@FUZZ
@given(st.text(max_size=2000))
def test_feeds_fuzz_json_like_text(text: str) -> None:
    _check(('{"version": "https://jsonfeed.org/version/1.1", "items": ' + text).encode())


@FUZZ
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
                    lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(st.sampled_from(
                        ["id", "url", "title", "items", "authors", "author", "tags",
                         "attachments", "date_published", "content_html", "name", "size_in_bytes",
                         "hubs", "mime_type"]), inner, max_size=6), max_leaves=30))
def test_feeds_fuzz_json_feed_shapes(value: object) -> None:
    doc = {"version": "https://jsonfeed.org/version/1.1", "title": "t", "items": [value],
           "authors": value, "hubs": value}
    _check(json.dumps(doc).encode())


@FUZZ
@given(st.binary(max_size=2048), st.text(max_size=300))
def test_feeds_fuzz_discovery_never_raises(html: bytes, header: str) -> None:
    find_feed_links(html, "https://site.test/")
    hub_and_self_from_link_header(header)
