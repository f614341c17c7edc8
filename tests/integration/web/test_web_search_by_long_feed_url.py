"""A feed's URL finds that feed on /search and the API however long it is (directory.md: "A
query that is one http(s) URL, the URL of a feed now or as it was added, finds that feed").

``q`` was capped at 200 characters before anything looked at it, and the search boxes cut what
was pasted at 200: a feed whose address is longer (private podcast feeds carry a long token,
news searches a long query string; feeds are added up to 2,048) could not be found by it — a
422 about the length, or the search of a cut-off address. Other queries keep the 200 cap.
"""

from __future__ import annotations

import re
from typing import Any

from .conftest import add_crawled

LONG = "https://podcasts.example.test/private/" + "Ab9_" * 60 + "/feed.xml?listener=" + "7" * 40


def _titles(html: str) -> list[str]:
    return re.findall(r'class="feed-title" href="/feeds/\d+">([^<]+)<', html)


def test_web_search_page_finds_a_feed_by_a_url_over_200_characters(
    client: Any, store: Any
) -> None:
    assert len(LONG) > 300
    add_crawled(store, LONG, title="Private show", kind="podcast")
    add_crawled(store, "https://podcasts.example.test/other.xml", title="Other")
    r = client.get("/search", params={"q": LONG})
    assert r.status_code == 200, r.text[:400]
    assert _titles(r.text) == ["Private show"]


def test_web_api_finds_a_feed_by_a_url_over_200_characters(client: Any, store: Any) -> None:
    fid = add_crawled(store, LONG, title="Private show", kind="podcast")
    r = client.get("/api/v1/feeds", params={"q": LONG})
    assert r.status_code == 200, r.text[:400]
    assert [i["id"] for i in r.json()["items"]] == [fid]


def test_web_search_boxes_take_a_pasted_feed_url_whole(client: Any, store: Any) -> None:
    """A browser cuts a pasted value at the input's maxlength, silently."""
    add_crawled(store, LONG, title="Private show")
    for page in ("/", "/search?q=show", "/feeds"):
        html = client.get(page).text
        boxes = re.findall(r'<input type="search" name="q"[^>]*>', html)
        assert boxes, page
        for box in boxes:
            limit = re.search(r'maxlength="(\d+)"', box)
            assert limit is None or int(limit.group(1)) >= len(LONG), (page, box)


def test_web_long_queries_that_are_no_feed_url_are_still_refused(client: Any, store: Any) -> None:
    """The other direction: the 200-character cap still holds for words, and for an address
    the directory does not hold, on the page and the API alike, naming q."""
    add_crawled(store, LONG, title="Private show")
    for q in ("x" * 201, "long words " * 20, LONG.replace("private", "public")):
        page = client.get("/search", params={"q": q})
        assert page.status_code == 422, q
        assert "q: " in page.text
        assert "200 characters" in page.text
        api = client.get("/api/v1/feeds", params={"q": q})
        assert api.status_code == 422, q
        assert api.json()["detail"].startswith("bad request: q: ")
        assert "200 characters" in api.json()["detail"]
