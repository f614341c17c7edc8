"""The JSON API: reads public, writes behind the admin token, bad input is a 4xx."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from fairfetch.config import Settings
from fairfetch.feeds.model import Entry
from fairfetch.store import SqlStore

from .conftest import TOKEN, add_crawled, make_client

AUTH = {"Authorization": f"Bearer {TOKEN}"}


def test_web_api_lists_filters_and_shows_feeds(client, store: SqlStore) -> None:
    a = add_crawled(
        store,
        "http://a.test/feed",
        title="Alpha",
        kind="podcast",
        entries=[Entry(id="1", title="one"), Entry(id="2", title="two")],
    )
    add_crawled(
        store,
        "http://b.test/feed",
        title="Beta",
        kind="blog",
        status="dead",
        error_count=10,
        last_error="gone: 410",
        outcome="error",
        error_kind="gone",
    )
    body = client.get("/api/v1/feeds").json()
    assert body["total"] == 2
    assert [f["title"] for f in body["items"]] == ["Alpha", "Beta"]
    assert client.get("/api/v1/feeds", params={"kind": "podcast"}).json()["total"] == 1
    dead = client.get("/api/v1/feeds", params={"status": "dead"}).json()["items"]
    assert [f["url"] for f in dead] == ["http://b.test/feed"]
    shown = client.get(f"/api/v1/feeds/{a}").json()
    for key in (
        "url",
        "original_url",
        "title",
        "kind",
        "kind_evidence",
        "status",
        "error_count",
        "last_error",
        "last_success_at",
        "last_fetched_at",
        "next_crawl_at",
        "etag",
        "last_modified",
        "redirects",
        "contacts",
        "authors",
        "entry_count",
        "websub",
        "crawls",
    ):
        assert key in shown, key
    assert shown["entry_count"] == 2
    assert shown["last_success_at"].endswith("Z")
    entries = client.get(f"/api/v1/feeds/{a}/entries").json()
    assert entries["total"] == 2
    assert {e["title"] for e in entries["items"]} == {"one", "two"}
    assert client.get("/api/v1/entries", params={"feed_id": a}).json()["total"] == 2


def test_web_api_rejects_bad_parameters_with_4xx(client) -> None:
    for params in (
        {"kind": "radio"},
        {"status": "x"},
        {"sort": "x"},
        {"page": 0},
        {"per_page": 1000},
        {"order": "sideways"},
        {"q": "q" * 201},
    ):
        r = client.get("/api/v1/feeds", params=params)
        assert r.status_code == 422, params
        assert r.json()["detail"].startswith("bad request: ")
    assert client.get("/api/v1/feeds/abc").status_code == 422
    assert client.get("/api/v1/feeds/77").json() == {"detail": "not found: feed 77"}


def test_web_api_writes_need_the_token(client, store: SqlStore) -> None:
    fid = add_crawled(store, "http://a.test/feed")
    r = client.delete(f"/api/v1/feeds/{fid}")
    assert r.status_code == 401
    assert r.headers["www-authenticate"] == "Bearer"
    r = client.delete(f"/api/v1/feeds/{fid}", headers={"Authorization": "Bearer wrong"})
    assert r.status_code == 403
    assert "not valid" in r.json()["detail"]
    assert client.post("/api/v1/feeds", json={"url": "http://x.test/"}).status_code == 401
    assert client.post(f"/api/v1/feeds/{fid}/refresh").status_code == 401
    assert store.find_feed(fid) is not None  # nothing happened
    r = client.delete(f"/api/v1/feeds/{fid}", headers=AUTH)
    assert r.status_code == 200
    assert r.json() == {"deleted": fid, "url": "http://a.test/feed"}
    assert store.find_feed(fid) is None
    assert client.delete(f"/api/v1/feeds/{fid}", headers=AUTH).status_code == 404


def test_web_writing_is_disabled_without_a_configured_token(store: SqlStore) -> None:
    fid = add_crawled(store, "http://a.test/feed")
    with make_client(Settings(db=store.url, admin_token=""), store) as c:
        r = c.delete(f"/api/v1/feeds/{fid}", headers={"Authorization": "Bearer "})
        assert r.status_code == 403
        assert "writing is disabled" in r.json()["detail"]
        r = c.post(f"/feeds/{fid}/delete", data={"token": "anything"})
        assert r.status_code == 403
        assert "writing is disabled" in r.text
        assert "Refresh now" not in c.get(f"/feeds/{fid}").text
    assert store.find_feed(fid) is not None


def test_web_form_delete_with_token_sets_cookie_for_next_forms(client, store: SqlStore) -> None:
    a = add_crawled(store, "http://a.test/feed")
    b = add_crawled(store, "http://b.test/feed")
    assert client.post(f"/feeds/{a}/delete", data={"token": "nope"}).status_code == 403
    r = client.post(f"/feeds/{a}/delete", data={"token": TOKEN}, follow_redirects=False)
    assert r.status_code == 303
    assert r.headers["location"] == "/feeds?notice=deleted"
    assert "httponly" in r.headers["set-cookie"].lower()
    assert "samesite=strict" in r.headers["set-cookie"].lower()
    assert store.find_feed(a) is None
    r = client.post(f"/feeds/{b}/delete", follow_redirects=False)  # cookie alone now
    assert r.status_code == 303
    assert store.find_feed(b) is None


def test_web_api_add_rejects_invalid_urls_without_fetching(client) -> None:
    for url in ("javascript:alert(1)", "ftp://x.test/", "http://", "not a url"):
        r = client.post("/api/v1/feeds", json={"url": url}, headers=AUTH)
        assert r.status_code == 422, url
    assert client.post("/api/v1/feeds", json={}, headers=AUTH).status_code == 422
    assert client.post("/api/v1/feeds", content=b"{", headers=AUTH).status_code == 422
    assert client.get("/api/v1/feeds").json()["total"] == 0


def test_web_api_stats_and_openapi(client, store: SqlStore) -> None:
    now = datetime.now(UTC)
    add_crawled(store, "http://a.test/feed", at=now - timedelta(minutes=2))
    stats = client.get("/api/v1/stats").json()
    assert stats["last_hour"]["crawls"] == {"ok": 1}
    assert stats["feeds"]["total"] == 1
    doc = client.get("/api/v1/openapi.json").json()
    paths = doc["paths"]
    assert {"get", "post"} <= set(paths["/api/v1/feeds"])
    assert {"get", "delete"} <= set(paths["/api/v1/feeds/{feed_id}"])
    assert "post" in paths["/api/v1/feeds/{feed_id}/refresh"]
    assert "/api/v1/entries" in paths
    assert "/api/v1/stats" in paths
    assert "HTTPBearer" in doc["components"]["securitySchemes"]
