"""Pages answer while the crawler holds its write transaction open, from the last commit."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from fairfetch.feeds.model import Entry
from fairfetch.store import CrawlWrite, SqlStore, hooks

from .conftest import add_crawled


def test_web_pages_read_the_last_commit_while_a_crawl_write_is_open(client, store: SqlStore):
    now = datetime.now(UTC)
    fid = add_crawled(store, "http://a.test/feed", title="Before", at=now - timedelta(minutes=2))
    seen: dict[str, Any] = {}

    def during_write(_conn, feed_id, _ids, _now, _first, _settings) -> None:  # type: ignore[no-untyped-def]
        # runs inside the crawler's transaction, which holds SQLite's write lock
        seen["stats"] = client.get("/api/v1/stats").json()
        seen["feed"] = client.get(f"/api/v1/feeds/{feed_id}").json()
        seen["page"] = client.get("/crawlstats").status_code

    hooks.register_new_entries_hook(during_write)
    try:
        store.write(
            [
                CrawlWrite(
                    feed_id=fid,
                    url="http://a.test/feed",
                    at=now,
                    outcome="ok",
                    politeness_key="a.test",
                    feed_changes={"title": "After"},
                    entries=[Entry(id="new", title="new entry")],
                )
            ]
        )
    finally:
        hooks.unregister_new_entries_hook(during_write)
    assert seen["page"] == 200
    assert seen["feed"]["title"] == "Before"  # the uncommitted change is not visible
    assert seen["feed"]["entry_count"] == 0
    assert seen["stats"]["last_hour"]["crawls"] == {"ok": 1}
    after = client.get(f"/api/v1/feeds/{fid}").json()
    assert (after["title"], after["entry_count"]) == ("After", 1)
    assert client.get("/api/v1/stats").json()["last_hour"]["crawls"] == {"ok": 2}
