"""Search on both databases: title, URL and author; the index follows every write."""

from __future__ import annotations

from fairfetch.feeds.model import Person
from fairfetch.store import CrawlWrite, SqlStore
from fairfetch.store import directory_repo as repo

from .conftest import NOW, add_crawled


def _urls(page: repo.Page) -> list[str]:
    return [r["url"] for r in page.rows]


def test_web_search_finds_title_url_and_author(any_store: SqlStore) -> None:
    s = any_store
    add_crawled(s, "http://gardening.test/rss", title="Green Thumbs Weekly", at=NOW)
    add_crawled(
        s,
        "http://cooking.test/feed",
        title="Kitchen Notes",
        at=NOW,
        authors=[(Person(name="Marguerite Duras"), "author")],
    )
    add_crawled(s, "http://other.test/feed", title="Nothing Related", at=NOW)
    assert _urls(repo.search_feeds(s, "thumbs")) == ["http://gardening.test/rss"]
    assert _urls(repo.search_feeds(s, "GREEN weekly")) == ["http://gardening.test/rss"]
    assert _urls(repo.search_feeds(s, "garden")) == ["http://gardening.test/rss"]  # URL, prefix
    assert _urls(repo.search_feeds(s, "marguerite")) == ["http://cooking.test/feed"]
    assert repo.search_feeds(s, "green kitchen").total == 0  # every word must match
    assert repo.search_feeds(s, "zzzz").total == 0
    assert repo.search_feeds(s, "").total == 0


def test_web_search_query_syntax_from_users_is_inert(any_store: SqlStore) -> None:
    s = any_store
    add_crawled(s, "http://a.test/feed", title="Alpha NEAR beta", at=NOW)
    for q in (
        '"',
        "alpha OR",
        "NEAR(",
        "*",
        "title:alpha",
        "alpha AND NOT",
        "a'b",
        "\x00",
        "-alpha",
        "alpha & | ! :*",
        "((((",
        "\ud800",
    ):
        repo.search_feeds(s, q)  # must not raise
    assert repo.search_feeds(s, 'alpha:"beta"').total == 1  # read as the words alpha, beta


def test_web_search_index_follows_updates_deletes_and_author_changes(any_store: SqlStore) -> None:
    s = any_store
    fid = add_crawled(
        s,
        "http://x.test/feed",
        title="Old Name",
        at=NOW,
        authors=[(Person(name="First Author"), "author")],
    )
    assert repo.search_feeds(s, "old").total == 1
    s.write(
        [
            CrawlWrite(
                feed_id=fid,
                url="http://x.test/feed",
                at=NOW,
                outcome="ok",
                politeness_key="x.test",
                feed_changes={"title": "New Name"},
                authors=[(Person(name="Second Writer"), "author")],
            )
        ]
    )
    assert repo.search_feeds(s, "old").total == 0
    assert repo.search_feeds(s, "new name").total == 1
    assert repo.search_feeds(s, "first").total == 0
    assert repo.search_feeds(s, "second writer").total == 1
    s.delete_feed(fid)
    assert repo.search_feeds(s, "new").total == 0


def test_web_search_filters_and_pages(any_store: SqlStore) -> None:
    s = any_store
    for i in range(5):
        add_crawled(s, f"http://p{i}.test/feed", title=f"Radio hour {i}", kind="podcast", at=NOW)
    add_crawled(s, "http://b.test/feed", title="Radio blog", kind="blog", at=NOW)
    assert repo.search_feeds(s, "radio").total == 6
    assert repo.search_feeds(s, "radio", kind="podcast").total == 5
    page = repo.search_feeds(s, "radio", kind="podcast", limit=2, offset=4)
    assert page.total == 5
    assert len(page.rows) == 1


def test_web_search_page_and_api(client, store: SqlStore) -> None:
    add_crawled(store, "http://gardening.test/rss", title="Green Thumbs Weekly", at=NOW)
    r = client.get("/search", params={"q": "thumbs"})
    assert r.status_code == 200
    assert "Green Thumbs Weekly" in r.text
    assert "1 feed matching" in r.text
    api = client.get("/api/v1/feeds", params={"q": "green"}).json()
    assert api["total"] == 1
    assert api["items"][0]["url"] == "http://gardening.test/rss"
    assert "at least one word" in client.get("/search", params={"q": "!!!"}).text


def test_web_listing_sorts_and_filters_on_both_databases(any_store: SqlStore) -> None:
    s = any_store
    a = add_crawled(s, "http://a.test/feed", title="beta", kind="podcast", at=NOW)
    b = add_crawled(
        s,
        "http://b.test/feed",
        title="Alpha",
        kind="podcast",
        at=NOW,
        status="error",
        error_count=4,
        outcome="error",
        error_kind="dns",
    )
    c = add_crawled(s, "http://c.test/feed", title="gamma", kind="blog", at=NOW)
    ids = lambda page: [r["id"] for r in page.rows]  # noqa: E731
    assert ids(repo.list_feeds(s)) == [b, a, c]
    assert ids(repo.list_feeds(s, sort="title", descending=True)) == [c, a, b]
    assert ids(repo.list_feeds(s, kind="podcast")) == [b, a]
    assert ids(repo.list_feeds(s, sort="added")) == [c, b, a]
    assert ids(repo.list_feeds(s, sort="errors", limit=1)) == [b]
    assert ids(repo.list_feeds(s, status="error")) == [b]
    page = repo.list_feeds(s, kind="podcast", limit=1, offset=1)
    assert (ids(page), page.total) == ([a], 2)
    assert repo.kind_counts(s) == {"podcast": 2, "blog": 1}
    assert repo.status_counts(s) == {"ok": 2, "error": 1}


def test_web_search_ranks_narrow_queries_and_lists_broad_ones_newest_first(
    store: SqlStore, monkeypatch
) -> None:
    a = add_crawled(store, "http://a.test/feed", title="radio", at=NOW)
    b = add_crawled(store, "http://b.test/feed", title="radio radio radio weekly", at=NOW)
    c = add_crawled(
        store,
        "http://c.test/feed",
        title="Talk",
        at=NOW,
        authors=[(Person(name="Radio Person"), "author")],
    )
    ranked = [r["id"] for r in repo.search_feeds(store, "radio").rows]
    assert ranked[-1] == c  # the author match weighs less than title matches
    assert set(ranked) == {a, b, c}
    assert repo.search_feeds(store, "radio").ranked
    monkeypatch.setattr(repo, "RANK_LIMIT", 2)
    broad = repo.search_feeds(store, "radio")
    assert [r["id"] for r in broad.rows] == [c, b, a]
    assert not broad.ranked
    assert [r["id"] for r in repo.search_feeds(store, "radio", kind="blog").rows] == [c, b, a]
    page = repo.search_feeds(store, "radio", limit=1, offset=1)
    assert ([r["id"] for r in page.rows], page.total) == ([b], 3)


def test_web_search_words_may_come_from_the_title_and_the_authors_together(
    any_store: SqlStore,
) -> None:
    """"Title, URL or author names contain every word": each word may be found in any of them,
    as FTS5 reads the row on SQLite. PostgreSQL required all words in the title and URL, or
    all in one author's name, so "alice morning" found nothing there."""
    s = any_store
    add_crawled(
        s,
        "http://show.test/feed",
        title="Morning Podcast",
        at=NOW,
        authors=[(Person(name="Alice Smith"), "author"), (Person(name="Bob Jones"), "author")],
    )
    add_crawled(s, "http://other.test/feed", title="Evening Podcast", at=NOW)
    assert _urls(repo.search_feeds(s, "alice morning")) == ["http://show.test/feed"]
    assert _urls(repo.search_feeds(s, "alice bob")) == ["http://show.test/feed"]  # two authors
    assert _urls(repo.search_feeds(s, "podcast smi")) == ["http://show.test/feed"]  # a prefix
    assert repo.search_feeds(s, "alice evening").total == 0  # every word still must match
    assert repo.search_feeds(s, "alice evening").rows == []
