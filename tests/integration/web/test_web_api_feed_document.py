"""Every API answer that carries a feed carries the same document as GET /api/v1/feeds/{id}
(the fields of ``feeds show --json``): same keys, and ``websub`` always with its keys, so a
client can read ``feed["websub"]["hub"]`` whichever call handed it the feed."""

from __future__ import annotations

from typing import Any

from .conftest import TOKEN, add_crawled

AUTH = {"Authorization": f"Bearer {TOKEN}"}


def test_web_api_add_of_a_known_feed_returns_the_full_document(client: Any, store: Any) -> None:
    url = "http://doc.example.test/feed.xml"
    feed_id = add_crawled(store, url, hub_urls=["http://hub.example.test/"])
    shown = client.get(f"/api/v1/feeds/{feed_id}").json()
    assert shown["websub"]["hub"] == "http://hub.example.test/"

    r = client.post("/api/v1/feeds", json={"url": url}, headers=AUTH)
    assert r.status_code == 200, r.text
    added = r.json()["feed"]
    assert set(added) == set(shown)
    assert added["websub"] == shown["websub"]
    assert {k: v for k, v in added.items() if k != "crawls"} == {
        k: v for k, v in shown.items() if k != "crawls"
    }


def test_web_api_refresh_returns_the_full_document(client: Any, store: Any) -> None:
    # 127.0.0.2 is refused by the perimeter (nothing allowed): the refresh connects nowhere.
    feed_id = add_crawled(store, "http://127.0.0.2:9/feed.xml")
    r = client.post(f"/api/v1/feeds/{feed_id}/refresh", headers=AUTH)
    assert r.status_code == 200, r.text
    refreshed = r.json()["feed"]
    shown = client.get(f"/api/v1/feeds/{feed_id}").json()
    assert set(refreshed) == set(shown)
    assert shown["websub"]
    assert set(refreshed["websub"]) == set(shown["websub"])
    assert refreshed["last_error"] == shown["last_error"]
    assert refreshed["last_error"].startswith("perimeter")
