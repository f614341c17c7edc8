"""The category filter, in both directions, and the newness guard."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fairfetch.notify.filters import CategoryFilter, parse_categories
from fairfetch.notify.newness import NewnessLimits, identity_variants, is_news


@pytest.mark.parametrize(
    ("only", "exclude", "categories", "kept"),
    [
        # no filter keeps everything, with or without categories
        ((), (), ["Tech"], True),
        ((), (), [], True),
        # only: keeps an entry in a wanted category, drops one in none of them
        (("tech",), (), ["Tech", "Life"], True),
        (("tech",), (), ["Life"], False),
        (("tech",), (), [], False),
        (("tech", "science"), (), ["Science"], True),
        # except: drops an entry in an unwanted category, keeps the rest
        ((), ("sport",), ["Sport"], False),
        ((), ("sport",), ["Sport", "Tech"], False),
        ((), ("sport",), ["Tech"], True),
        ((), ("sport",), [], True),
        # both: wanted and not unwanted
        (("tech",), ("rumour",), ["Tech"], True),
        (("tech",), ("rumour",), ["Tech", "Rumour"], False),
        # case and spacing do not matter
        (("  Machine   Learning ",), (), ["machine learning"], True),
        ((), ("SPORT",), ["sport "], False),
        # one spelling of a character whatever its Unicode composition: a feed written on a Mac
        # says "Cafe" + U+0301, the reader types "Café" (U+00E9) — both directions
        (("Caf\u00e9",), (), ["Cafe\u0301"], True),
        (("Cafe\u0301",), (), ["Caf\u00e9"], True),
        ((), ("Caf\u00e9",), ["Cafe\u0301"], False),
        ((), ("Caf\u00e9",), ["Cafe"], True),
        (("Caf\u00e9",), (), ["Cafe"], False),
        # polytonic Greek, spelled half-composed (U+1F80, alpha with psili and iota subscript,
        # then a combining acute) by the feed and composed (U+1F84) by the reader: casefold
        # turns the subscript into an iota, which then sat before the acute in one spelling
        # and after it in the other
        (("\u1f84\u03c3\u03bc\u03b1",), (), ["\u1f80\u0301\u03c3\u03bc\u03b1"], True),
        (("\u1f80\u0301\u03c3\u03bc\u03b1",), (), ["\u1f84\u03c3\u03bc\u03b1"], True),
        ((), ("\u1f84\u03c3\u03bc\u03b1",), ["\u1f80\u0301\u03c3\u03bc\u03b1"], False),
        ((), ("\u1f84\u03c3\u03bc\u03b1",), ["\u1f00\u03c3\u03bc\u03b1"], True),
    ],
)
def test_notify_filter_table(only, exclude, categories, kept):
    assert CategoryFilter.of(only, exclude).accepts(categories) is kept


def test_notify_filter_composition_never_matters_in_greek_extended():
    """Every character of the Greek Extended block (where composition and case folding
    interact), alone and before an accent, compares equal to its NFD and NFC spellings."""
    import unicodedata

    from fairfetch.notify.filters import normalise_category

    for cp in range(0x1F00, 0x2000):
        for text in (chr(cp), chr(cp) + "\u0301", chr(cp) + "\u0345\u0300"):
            for form in ("NFD", "NFC"):
                assert normalise_category(unicodedata.normalize(form, text)) == (
                    normalise_category(text)), (hex(cp), form)


def test_notify_filter_parse_categories():
    assert parse_categories("News, tech ,, News") == ["news", "tech"]
    assert parse_categories(None) == []
    assert parse_categories(["A b", "a  B"]) == ["a b"]


_cat = st.sampled_from(["a", "b", "c", "d"])


@given(st.sets(_cat), st.sets(_cat), st.sets(_cat))
def test_notify_filter_laws(only, exclude, cats):
    flt = CategoryFilter.of(only, exclude)
    kept = flt.accepts(cats)
    # kept exactly when (no only-list or some wanted category) and no unwanted category
    assert kept == ((not only or bool(cats & only)) and not (cats & exclude))
    # "only X" and "all but X" split the entries carrying X or not between them
    for c in "abcd":
        assert CategoryFilter.of([c], []).accepts(cats) != CategoryFilter.of([], [c]).accepts(
            cats
        )


NOW = datetime(2026, 6, 1, 12, tzinfo=UTC)


def test_notify_newness_keeps_recent_and_undated():
    assert is_news(None, feed_newest=NOW, seen_at=NOW)
    assert is_news(NOW - timedelta(hours=3), feed_newest=NOW, seen_at=NOW)
    assert is_news(NOW + timedelta(days=2), feed_newest=NOW, seen_at=NOW)
    # exactly at the limits is still news
    assert is_news(NOW - timedelta(days=7), feed_newest=NOW, seen_at=NOW)


def test_notify_newness_drops_republished_old_items():
    # published long before the feed's newest entry
    assert not is_news(NOW - timedelta(days=8), feed_newest=NOW, seen_at=NOW)
    # a feed that re-emits its archive moves its newest too: the age limit still catches it
    old = NOW - timedelta(days=400)
    assert not is_news(old, feed_newest=old, seen_at=NOW)


def test_notify_newness_measures_from_now_when_the_newest_is_in_the_future():
    ahead = NOW + timedelta(days=365)  # one entry dated a year ahead
    assert is_news(NOW - timedelta(hours=3), feed_newest=ahead, seen_at=NOW)
    assert is_news(NOW - timedelta(days=7), feed_newest=ahead, seen_at=NOW)
    assert not is_news(NOW - timedelta(days=8), feed_newest=ahead, seen_at=NOW)
    assert not is_news(NOW - timedelta(days=400), feed_newest=ahead, seen_at=NOW)


def test_notify_newness_age_counts_from_the_feeds_previous_read():
    # the feed was last read three weeks ago (our outage): what it published since is news
    last = NOW - timedelta(days=21)
    assert is_news(NOW - timedelta(days=20), feed_newest=last, seen_at=NOW, last_read=last)
    assert not is_news(NOW - timedelta(days=20), feed_newest=last, seen_at=NOW)
    # an item already old at the previous read is still old
    assert not is_news(last - timedelta(days=15), feed_newest=last, seen_at=NOW, last_read=last)
    # a previous read "after" now (a clock step) never makes old items news
    assert not is_news(NOW - timedelta(days=15), feed_newest=NOW, seen_at=NOW,
                       last_read=NOW + timedelta(days=30))


def test_notify_newness_limits_are_configurable():
    lax = NewnessLimits(behind_newest=None, max_age=None)
    assert is_news(NOW - timedelta(days=400), feed_newest=NOW, seen_at=NOW, limits=lax)
    strict = NewnessLimits(behind_newest=timedelta(hours=1), max_age=timedelta(days=1))
    assert not is_news(NOW - timedelta(hours=2), feed_newest=NOW, seen_at=NOW, limits=strict)
    assert is_news(NOW - timedelta(minutes=30), feed_newest=NOW, seen_at=NOW, limits=strict)


def test_notify_identity_variants():
    v = identity_variants("http://www.Example.com/post/1")
    assert v[0] == "http://www.Example.com/post/1"
    assert "https://example.com/post/1" in v
    assert "https://example.com/post/1/" in v
    assert "http://www.example.com/post/1" in v
    # another path is another entry
    assert "https://example.com/post/2" not in v
    assert identity_variants("tag:example.com,2024:1") == ["tag:example.com,2024:1"]
