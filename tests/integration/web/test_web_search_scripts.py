"""Search words keep their combining marks (Thai tone marks, Devanagari vowel signs and virama).

The search box split a word at every mark, which Python's ``\\w`` does not count as a letter:
"ข่าว" became "ข" and "าว", "हिन्दी" six pieces, so neither was found on PostgreSQL (each piece
must be a whole word there) and SQLite matched on fragments. A word is letters, digits and the
marks that belong to them.
"""

from __future__ import annotations

import pytest

from fairfetch.store import SqlStore
from fairfetch.store import directory_repo as repo

from .conftest import NOW, add_crawled


@pytest.mark.parametrize(
    ("title", "query", "words"),
    [
        ("ข่าว วันนี้", "ข่าว", ["ข่าว"]),
        ("हिन्दी समाचार", "हिन्दी", ["हिन्दी"]),
        ("বাংলা খবর", "বাংলা", ["বাংলা"]),
        ("Café Müller", "café", ["café"]),
    ],
    ids=["thai", "devanagari", "bengali", "latin-control"],
)
def test_web_search_words_keep_their_combining_marks(
    any_store: SqlStore, title: str, query: str, words: list[str]
) -> None:
    assert repo.query_words(query) == words
    add_crawled(any_store, "http://news.test/feed", title=title, at=NOW)
    add_crawled(any_store, "http://other.test/feed", title="Something else", at=NOW)
    assert [r["url"] for r in repo.search_feeds(any_store, query).rows] == [
        "http://news.test/feed"
    ]


@pytest.mark.parametrize(
    ("title", "queries"),
    [("Подкаст про всё", ["подкаст", "Подкаст", "ВСЁ"]), ("Émile Zola", ["émile", "ÉMILE"])],
    ids=["cyrillic", "latin-accented"],
)
def test_web_search_finds_words_that_begin_with_a_non_ascii_capital(
    any_store: SqlStore, title: str, queries: list[str]
) -> None:
    # On PostgreSQL, with the UTF-8 ctype docs/operations.md asks for (the test cluster's).
    add_crawled(any_store, "http://news.test/feed", title=title, at=NOW)
    for q in queries:
        assert repo.search_feeds(any_store, q).total == 1, q
