"""Spellings of one topic (websub/topic.py): what a hub may send back for the self URL we
subscribed to, and what must stay a different topic."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fairfetch.websub.topic import same_topic, topic_key


@pytest.mark.parametrize(("ours", "theirs"), [
    ("http://a.test/%7Euser/feed", "http://a.test/~user/feed"),          # §5.1.1 decoding
    ("http://a.test/%7euser/feed", "http://a.test/%7Euser/feed"),        # hex case
    ("http://a.test/f%C3%A9ed", "http://a.test/féed"),                    # IRI -> URI
    ("http://a.test/f%c3%a9ed", "http://a.test/féed"),
    ("http://a.test/a%20b", "http://a.test/a b"),
    ("http://a.test/x?q={y}", "http://a.test/x?q=%7By%7D"),              # not URI characters
    ("http://a.test/%41%2d%5F", "http://a.test/A-_"),
    ("HTTP://A.Test:8080/Feed", "http://a.test:8080/Feed"),              # scheme and host case
    ("http://User:Pw@A.test/f", "http://User:Pw@a.test/f"),
    ("http://a.test/f?x=%E2%82%AC", "http://a.test/f?x=€"),
])
def test_websub_same_topic_spelled_another_way(ours: str, theirs: str) -> None:
    assert same_topic(ours, theirs)
    assert same_topic(theirs, ours)


@pytest.mark.parametrize(("ours", "theirs"), [
    ("http://a.test/a%2Fb", "http://a.test/a/b"),        # reserved: an escape is not the char
    ("http://a.test/f?a=1%26b=2", "http://a.test/f?a=1&b=2"),
    ("http://a.test/%3F", "http://a.test/?"),
    ("http://a.test/Feed", "http://a.test/feed"),         # path case
    ("http://a.test/feed", "http://a.test/feed/"),
    ("http://a.test/feed", "https://a.test/feed"),
    ("http://a.test/feed", "http://a.test:80/feed"),      # no port equating: not our business
    ("http://a.test/feed?x", "http://a.test/feed"),
    ("http://user@a.test/f", "http://USER@a.test/f"),     # userinfo case matters
    ("http://a.test/%25", "http://a.test/%"),
    ("http://a.test/f", ""),
])
def test_websub_other_topics_stay_other(ours: str, theirs: str) -> None:
    assert not same_topic(ours, theirs)
    assert not same_topic(theirs, ours)


@given(st.text())
def test_websub_topic_key_never_raises_and_is_stable(text: str) -> None:
    key = topic_key(text)
    assert topic_key(key) == key
    assert same_topic(text, text)
