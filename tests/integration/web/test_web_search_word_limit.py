"""Search takes at most MAX_QUERY_WORDS distinct words, and says so instead of dropping the rest.

Every word must match, so a word dropped silently widens the answer: a ten-word query used to
search its first eight and list feeds lacking the last two, on the page and the API alike.
"""

from __future__ import annotations

import pytest

from fairfetch.config import Settings
from fairfetch.errors import InputError
from fairfetch.store import SqlStore
from fairfetch.store import directory_repo as repo

from .conftest import NOW, TOKEN, add_crawled, make_client

EIGHT = "one two three four five six seven eight"
TEN = EIGHT + " nine ten"


def _seed(s: SqlStore) -> tuple[int, int]:
    eight = add_crawled(s, "http://eight.test/feed", title=EIGHT, at=NOW)
    ten = add_crawled(s, "http://ten.test/feed", title=TEN, at=NOW)
    return eight, ten


def test_web_search_more_words_than_the_limit_is_refused_not_truncated(
    any_store: SqlStore,
) -> None:
    s = any_store
    eight, ten = _seed(s)
    assert repo.MAX_QUERY_WORDS == 8
    assert {r["id"] for r in repo.search_feeds(s, EIGHT).rows} == {eight, ten}
    assert [r["id"] for r in repo.search_feeds(s, TEN.replace("one two ", "")).rows] == [ten]
    with pytest.raises(InputError) as caught:
        repo.search_feeds(s, TEN)
    assert "at most 8 words" in str(caught.value)
    assert "10" in str(caught.value)
    # A repeated word asks nothing more: nine times "ten" is one word.
    assert [r["id"] for r in repo.search_feeds(s, " ".join(["ten"] * 9)).rows] == [ten]
    assert {r["id"] for r in repo.search_feeds(s, EIGHT + " Eight ONE one").rows} == {eight, ten}


def test_web_api_search_with_more_words_than_the_limit_is_a_422_naming_q(
    any_store: SqlStore,
) -> None:
    _seed(any_store)
    with make_client(Settings(db=any_store.url, admin_token=TOKEN), any_store) as c:
        r = c.get("/api/v1/feeds", params={"q": TEN})
        assert r.status_code == 422
        body = r.json()
        assert body["detail"].startswith("bad request: q: ")
        assert "at most 8 words" in body["detail"]
        assert [e["loc"] for e in body["errors"]] == [["query", "q"]]
        assert "items" not in body
        ok = c.get("/api/v1/feeds", params={"q": EIGHT})
        assert ok.status_code == 200
        assert ok.json()["total"] == 2


def test_web_search_page_with_more_words_than_the_limit_says_so_and_lists_nothing(
    any_store: SqlStore,
) -> None:
    _seed(any_store)
    with make_client(Settings(db=any_store.url, admin_token=TOKEN), any_store) as c:
        r = c.get("/search", params={"q": TEN})
        assert r.status_code == 422
        assert r.headers["content-type"].startswith("text/html")
        assert "at most 8 words" in r.text
        assert "http://eight.test/feed" not in r.text  # lacks nine and ten: never listed
        assert "feeds matching" not in r.text
        assert f'value="{TEN}"' in r.text  # the form keeps the query, to shorten it
        ok = c.get("/search", params={"q": EIGHT})
        assert ok.status_code == 200
        assert "2 feeds matching" in ok.text
