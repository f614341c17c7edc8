"""A feed URL pasted into the search box finds that feed, by the URL it has now or the one it
was added as. Split into words, a YouTube channel feed's URL is ten words ('https www youtube
com feeds videos xml channel id uc…'): over the eight-word limit, so the search page and the API
refused the very address of a feed in the directory."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

import pytest

from fairfetch.store import CrawlWrite

from .conftest import add_crawled

YOUTUBE = "https://www.youtube.com/feeds/videos.xml?channel_id=UCabc_Def-123"


def _titles(html: str) -> list[str]:
    return re.findall(r'class="feed-title" href="/feeds/\d+">([^<]+)<', html)


def test_web_search_page_finds_a_feed_by_its_pasted_url(client: Any, store: Any) -> None:
    add_crawled(store, YOUTUBE, title="A channel", kind="video")
    add_crawled(store, "https://www.youtube.com/feeds/videos.xml?channel_id=UCother", title="B")
    r = client.get("/search", params={"q": f"  {YOUTUBE} "})
    assert r.status_code == 200, r.text
    assert _titles(r.text) == ["A channel"]
    assert "1 feed matching" in r.text
    # the filters still apply
    assert _titles(client.get("/search", params={"q": YOUTUBE, "kind": "podcast"}).text) == []
    assert _titles(client.get("/search", params={"q": YOUTUBE, "kind": "video"}).text) == [
        "A channel"
    ]
    assert _titles(client.get("/search", params={"q": YOUTUBE, "page": 2}).text) == []


def test_web_search_finds_a_moved_feed_by_the_url_it_was_added_as(client: Any, store: Any) -> None:
    old = "http://old.example.test/a/b/c/d/e/f/feed.xml"
    fid = add_crawled(store, old, title="Moved")
    moved = CrawlWrite(
        feed_id=fid,
        url=old,
        at=datetime.now(UTC),
        outcome="ok",
        politeness_key="old.example.test",
        feed_changes={"url": "https://new.example.test/feed.xml"},
    )
    store.write([moved])
    assert store.get_feed(fid).original_url == old
    for q in (old, "https://new.example.test/feed.xml"):
        assert _titles(client.get("/search", params={"q": q}).text) == ["Moved"], q
        api = client.get("/api/v1/feeds", params={"q": q})
        assert api.status_code == 200, api.text
        assert [i["id"] for i in api.json()["items"]] == [fid]
        assert api.json()["total"] == 1


def test_web_api_search_finds_a_feed_by_its_pasted_url(client: Any, store: Any) -> None:
    fid = add_crawled(store, YOUTUBE, title="A channel", kind="video")
    r = client.get("/api/v1/feeds", params={"q": YOUTUBE})
    assert r.status_code == 200, r.text
    assert [i["id"] for i in r.json()["items"]] == [fid]
    assert r.json()["ranked"] is True
    assert (
        client.get("/api/v1/feeds", params={"q": YOUTUBE, "status": "dead"}).json()["items"] == []
    )


@pytest.mark.parametrize(
    "q",
    [
        "https://www.youtube.com/feeds/videos.xml?channel_id=UCnobody-at-all",  # no such feed
        "see https://a.example.test/x one two three four five six seven",  # not a URL alone
    ],
)
def test_web_search_for_an_unknown_long_url_is_still_the_word_search(
    client: Any, store: Any, q: str
) -> None:
    add_crawled(store, YOUTUBE, title="A channel", kind="video")
    assert client.get("/search", params={"q": q}).status_code == 422
    assert client.get("/api/v1/feeds", params={"q": q}).status_code == 422
