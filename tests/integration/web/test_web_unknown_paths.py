"""A mistyped address on the directory is the directory's own error page (HTML, with the
navigation and the CSP), not a bare JSON body; under /api/ it stays JSON."""

from __future__ import annotations

from typing import Any

from .conftest import add_crawled


def test_web_unknown_page_is_an_html_404(client: Any) -> None:
    r = client.get("/no-such-page")
    assert r.status_code == 404
    assert r.headers["content-type"].startswith("text/html")
    assert "Error 404" in r.text
    assert 'href="/feeds"' in r.text  # the site's navigation, so the reader can go on


def test_web_unknown_api_path_stays_json(client: Any) -> None:
    r = client.get("/api/v1/no-such-thing")
    assert r.status_code == 404
    assert r.headers["content-type"].startswith("application/json")
    assert r.json()["detail"]


def test_web_get_on_a_form_action_is_an_html_405_with_allow(client: Any, store: Any) -> None:
    feed_id = add_crawled(store, "http://paths.example.test/feed.xml")
    r = client.get(f"/feeds/{feed_id}/refresh")
    assert r.status_code == 405
    assert r.headers["content-type"].startswith("text/html")
    assert "POST" in r.headers["allow"]
    assert "Error 405" in r.text


def test_web_405_allow_lists_every_method_of_the_address(client: Any, store: Any) -> None:
    """RFC 9110 §15.5.6: the Allow of a 405 lists the methods the target resource supports;
    an address served by two routes (GET and POST /api/v1/feeds) has both, and every GET
    answers HEAD too (see test_web_head.py)."""
    feed_id = add_crawled(store, "http://paths.example.test/feed.xml")
    cases = {
        ("PUT", "/api/v1/feeds"): {"GET", "HEAD", "POST"},
        ("PATCH", f"/api/v1/feeds/{feed_id}"): {"GET", "HEAD", "DELETE"},
        ("PUT", "/add"): {"GET", "HEAD", "POST"},
        ("DELETE", "/"): {"GET", "HEAD"},
        ("GET", f"/feeds/{feed_id}/refresh"): {"POST"},
        ("DELETE", f"/api/v1/feeds/{feed_id}/refresh"): {"POST"},
        ("POST", "/static/style.css"): {"GET", "HEAD"},
    }
    for (method, path), methods in cases.items():
        r = client.request(method, path)
        assert r.status_code == 405, (method, path)
        allow = {m.strip() for m in r.headers["allow"].split(",")}
        assert allow == methods, (method, path, r.headers["allow"])
        for m in methods - {"HEAD"}:  # each listed method is one the address answers
            answer = client.request(m, path, headers={"Authorization": "Bearer wrong"})
            assert answer.status_code != 405, (m, path)
