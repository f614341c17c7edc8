"""Writing forms come from the directory's own pages: what a browser says about a post's origin
(Sec-Fetch-Site, else Origin) decides, whatever cookie or token it carries."""

from __future__ import annotations

from typing import Any

import pytest

from fairfetch.config import Settings
from fairfetch.store import SqlStore

from .conftest import TOKEN, add_crawled, make_client

OWN = "http://testserver"  # TestClient's host


@pytest.mark.parametrize(
    "headers",
    [
        {"Sec-Fetch-Site": "same-site"},
        {"Sec-Fetch-Site": "cross-site"},
        {"Sec-Fetch-Site": "same-site", "Origin": OWN},  # the browser's word wins
        {"Origin": "http://testserver:8081"},  # another port of the same host
        {"Origin": "http://evil.test"},
        {"Origin": "null"},  # a sandboxed page or a data: URL
    ],
)
def test_web_form_posted_from_another_page_is_refused_with_cookie_or_token(
    client: Any, store: SqlStore, headers: dict[str, str]
) -> None:
    fid = add_crawled(store, "https://a.example/feed.xml")
    client.cookies.set("fairfetch_admin", TOKEN)
    for path, data in (
        (f"/feeds/{fid}/delete", {}),
        (f"/feeds/{fid}/delete", {"token": TOKEN}),
        (f"/feeds/{fid}/refresh", {"token": TOKEN}),
        ("/add", {"url": "http://127.0.0.2/planted.xml", "token": TOKEN}),
    ):
        r = client.post(path, data=data, headers=headers, follow_redirects=False)
        assert r.status_code == 403, (path, r.status_code)
        assert "another site" in r.text
        assert "set-cookie" not in r.headers
    assert store.find_feed(fid) is not None
    assert len(store.feed_details(fid)["crawls"]) == 1
    assert store.find_feed("http://127.0.0.2/planted.xml") is None


@pytest.mark.parametrize(
    "headers",
    [
        {"Sec-Fetch-Site": "same-origin"},
        {"Sec-Fetch-Site": "none"},
        {"Origin": OWN},
        {"Origin": "http://directory.example:8443"},  # public_url: behind a proxy
        {},  # no browser: curl, a script
    ],
)
def test_web_form_posted_from_its_own_page_is_taken(
    store: SqlStore, headers: dict[str, str]
) -> None:
    settings = Settings(
        db=store.url, admin_token=TOKEN, public_url="http://directory.example:8443/"
    )
    fid = add_crawled(store, "https://a.example/feed.xml")
    with make_client(settings, store) as c:
        r = c.post(
            f"/feeds/{fid}/delete", data={"token": TOKEN}, headers=headers, follow_redirects=False
        )
        assert r.status_code == 303, r.text
    assert store.find_feed(fid) is None
