"""GET /api/v1/entries?feed_id=N names a feed: an unknown one is a 404, like
/api/v1/feeds/N/entries, not an empty list that reads as "this feed has no entries"."""

from __future__ import annotations

from typing import Any

from fairfetch.feeds.model import Entry

from .conftest import add_crawled


def test_web_api_entries_of_an_unknown_feed_is_404(client: Any, store: Any) -> None:
    feed_id = add_crawled(
        store, "http://entries.example.test/feed.xml", entries=[Entry(id="e1", title="One")]
    )
    known = client.get(f"/api/v1/entries?feed_id={feed_id}")
    assert known.status_code == 200
    assert [e["entry_id"] for e in known.json()["items"]] == ["e1"]

    unknown = client.get(f"/api/v1/entries?feed_id={feed_id + 1000}")
    assert unknown.status_code == 404, unknown.text
    assert str(feed_id + 1000) in unknown.json()["detail"]
    assert client.get(f"/api/v1/feeds/{feed_id + 1000}/entries").status_code == 404
    # Without the filter, every entry: still a plain list.
    assert client.get("/api/v1/entries").status_code == 200
