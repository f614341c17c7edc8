"""The network settings of the contract, end to end: private addresses are refused unless
FAIRFETCH_ALLOW_NETWORKS allows them, a FAIRFETCH_RESOLVE override still passes the perimeter,
and FAIRFETCH_ADMIN_TOKEN guards every writing action of the API."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from fastapi.testclient import TestClient

from fairfetch.config import load_settings
from fairfetch.store import open_store
from fairfetch.testing import Testbed

from .conftest import Cli


def _requests_to(tb: Testbed, host: str) -> int:
    return int(tb.snapshot()["hosts"].get(host, {}).get("requests", 0))


def test_loopback_is_refused_by_default(tb: Testbed, db_url: str) -> None:
    [spec] = tb.catalog(n=1, behaviours=["blog-etag-only"])
    before = _requests_to(tb, spec.host)
    cli = Cli({"FAIRFETCH_DB": db_url, "FAIRFETCH_RESOLVE": "*.test:127.0.0.1"})
    cli("feeds", "add", spec.url)
    [feed] = cli.json("feeds", "list", "--json")
    assert feed["status"] == "error"
    assert feed["last_error"].startswith("perimeter")
    assert _requests_to(tb, spec.host) == before  # not one request reached it


def test_an_overridden_address_still_passes_the_perimeter(tb: Testbed, db_url: str) -> None:
    [spec] = tb.catalog(n=1, behaviours=["blog-lastmod-only"])
    cli = Cli({
        "FAIRFETCH_DB": db_url, "FAIRFETCH_ALLOW_NETWORKS": "127.0.0.1/32",
        "FAIRFETCH_RESOLVE": f"{spec.host}:127.0.0.2,*.test:127.0.0.1",
    })  # fmt: skip
    cli("feeds", "add", spec.url)
    [feed] = cli.json("feeds", "list", "--json")
    assert feed["status"] == "error"
    assert feed["last_error"].startswith("perimeter")
    # and the same feed, allowed, is crawled (the refusal above was the override's address)
    allowed = Cli({**tb.env(), "FAIRFETCH_DB": db_url})
    before = _requests_to(tb, spec.host)
    allowed.ok("feeds", "refresh", spec.url)
    assert _requests_to(tb, spec.host) > before
    assert allowed.json("feeds", "show", spec.url, "--json")["status"] == "ok"


def test_admin_token_guards_writes(tmp_path: Path) -> None:
    from fairfetch.web.app import create_app

    store = open_store(f"sqlite:///{tmp_path}/web.db")
    feed, _ = store.add_feed("http://w.test/feed", now=datetime.now(UTC), politeness_key="w.test")
    try:
        for token, expected in (("", (403, 403)), ("sesame", (401, 403))):
            settings = load_settings(None, environ={"FAIRFETCH_ADMIN_TOKEN": token})
            with TestClient(create_app(settings, store)) as client:
                assert client.get("/api/v1/feeds").status_code == 200  # reads are public
                path = f"/api/v1/feeds/{feed.id}"
                assert client.delete(path).status_code == expected[0]
                wrong = {"Authorization": "Bearer wrong"}
                assert client.delete(path, headers=wrong).status_code == expected[1]
        assert store.find_feed(feed.id) is not None  # nothing was deleted
        settings = load_settings(None, environ={"FAIRFETCH_ADMIN_TOKEN": "sesame"})
        with TestClient(create_app(settings, store)) as client:
            r = client.delete(f"/api/v1/feeds/{feed.id}",
                              headers={"Authorization": "Bearer sesame"})  # fmt: skip
            assert r.status_code == 200
        assert store.find_feed(feed.id) is None
    finally:
        store.close()
