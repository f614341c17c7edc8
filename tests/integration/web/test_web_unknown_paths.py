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
