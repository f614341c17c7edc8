"""Search input becomes words only: no query-language operator can come from a user."""

from __future__ import annotations

import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from fairfetch.store.directory_repo import MAX_QUERY_WORDS, fts5_query, query_words, tsquery


def test_web_query_words_keeps_letters_and_digits_only() -> None:
    assert query_words('Green "thumbs" OR -weekly*') == ["green", "thumbs", "or", "weekly"]
    assert query_words("café_42 ünïcode") == ["café", "42", "ünïcode"]
    assert query_words("!!! ()") == []
    assert len(query_words(" ".join(f"w{i}" for i in range(50)))) == MAX_QUERY_WORDS


@given(st.text())
def test_web_query_builders_only_quote_words(text: str) -> None:
    words = query_words(text)
    # A word is letters and digits, and the combining marks that belong to them (a Thai tone
    # mark, a Devanagari vowel sign): it starts with a letter or digit; no mark is an operator.
    assert all(
        w and w[0].isalnum() and all(c.isalnum() or unicodedata.category(c)[0] == "M" for c in w)
        for w in words
    )
    fts = fts5_query(words)
    assert fts.count('"') == 2 * len(words)
    ts = tsquery(words)
    assert not set(ts) & set("|!()'<>-\\\"")
