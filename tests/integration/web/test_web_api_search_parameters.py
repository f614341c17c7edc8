"""GET /api/v1/feeds with q: a query with no words, and sort/order (which a search cannot
honour: it is ordered by relevance), are 422s naming the parameter, as every other bad
parameter is; they used to answer 0 results, or results in another order than asked."""

from __future__ import annotations

from fairfetch.config import Settings
from fairfetch.store import SqlStore

from .conftest import NOW, TOKEN, add_crawled, make_client


def test_web_api_search_without_words_is_a_422_naming_q(any_store: SqlStore) -> None:
    add_crawled(any_store, "http://a.test/feed", title="Alpha", at=NOW)
    with make_client(Settings(db=any_store.url, admin_token=TOKEN), any_store) as c:
        for q in ("!!", "   ", '"*"', "(((", "_"):
            r = c.get("/api/v1/feeds", params={"q": q})
            assert r.status_code == 422, q
            body = r.json()
            assert body["detail"].startswith("bad request: q: "), q
            assert "no words" in body["detail"], q
            assert [e["loc"] for e in body["errors"]] == [["query", "q"]], q
            assert "items" not in body, q
        # An empty q is no search at all: the listing, as before.
        listed = c.get("/api/v1/feeds", params={"q": ""})
        assert listed.status_code == 200
        assert listed.json()["total"] == 1
        # The search page stays a page.
        page = c.get("/search", params={"q": "!!"})
        assert page.headers["content-type"].startswith("text/html")
        assert "at least one word" in page.text


def test_web_api_search_with_sort_or_order_is_a_422_naming_them(any_store: SqlStore) -> None:
    add_crawled(any_store, "http://a.test/feed", title="alpha zeta", at=NOW)
    add_crawled(any_store, "http://b.test/feed", title="alpha beta", at=NOW)
    with make_client(Settings(db=any_store.url, admin_token=TOKEN), any_store) as c:
        for params, named in (
            ({"q": "alpha", "sort": "title"}, "sort"),
            ({"q": "alpha", "sort": "newest", "order": "asc"}, "sort"),
            ({"q": "alpha", "order": "desc"}, "order"),
        ):
            r = c.get("/api/v1/feeds", params=params)
            assert r.status_code == 422, params
            body = r.json()
            assert body["detail"].startswith(f"bad request: {named}: "), params
            assert "relevance" in body["detail"], params
            assert ["query", named] in [e["loc"] for e in body["errors"]], params
        # Search alone, and listing with sort and order, still answer.
        found = c.get("/api/v1/feeds", params={"q": "alpha"})
        assert found.status_code == 200
        assert found.json()["total"] == 2
        listed = c.get("/api/v1/feeds", params={"sort": "title", "order": "desc"})
        assert [i["title"] for i in listed.json()["items"]] == ["alpha zeta", "alpha beta"]
        listed = c.get("/api/v1/feeds", params={"sort": "title"})
        assert [i["title"] for i in listed.json()["items"]] == ["alpha beta", "alpha zeta"]
        assert c.get("/api/v1/feeds").json()["items"][0]["title"] == "alpha beta"  # title asc


def test_web_api_search_says_when_it_lists_newest_first_instead_of_best_first(
    any_store: SqlStore, monkeypatch
) -> None:
    """Past RANK_LIMIT matches SQLite lists newest first; the page says so, the API did not."""
    from fairfetch.store import directory_repo as repo

    add_crawled(any_store, "http://a.test/feed", title="radio radio radio", at=NOW)
    add_crawled(any_store, "http://b.test/feed", title="radio", at=NOW)
    with make_client(Settings(db=any_store.url, admin_token=TOKEN), any_store) as c:
        found = c.get("/api/v1/feeds", params={"q": "radio"}).json()
        assert found["ranked"] is True
        assert found["total"] == 2
        assert c.get("/api/v1/feeds").json()["ranked"] is None  # a listing: no relevance
        monkeypatch.setattr(repo, "RANK_LIMIT", 1)
        broad = c.get("/api/v1/feeds", params={"q": "radio"}).json()
        assert broad["ranked"] is repo.search_feeds(any_store, "radio").ranked
        if any_store.dialect == "sqlite":
            assert broad["ranked"] is False
            assert [i["url"] for i in broad["items"]] == ["http://b.test/feed", "http://a.test/feed"]
