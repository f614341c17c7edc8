"""Adding through the API and the form: a feed URL, and a site URL whose feed is discovered."""

from __future__ import annotations

from pathlib import Path

import httpx

from fairfetch.store import open_store
from fairfetch.testing import running_testbed
from fairfetch.web.app import create_app

from .conftest import TOKEN

AUTH = {"Authorization": f"Bearer {TOKEN}"}


async def test_web_add_feed_and_site_url_through_api_and_form(tmp_path: Path) -> None:
    async with running_testbed(seed=4) as testbed:
        store = open_store(f"sqlite:///{tmp_path}/add.db")
        settings = testbed.settings(db=store.url, admin_token=TOKEN)
        app = create_app(settings, store)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://web.test") as client:
            blog = testbed.catalog(1, ["blog"])[0]
            r = await client.post("/api/v1/feeds", json={"url": blog.url}, headers=AUTH)
            assert r.status_code == 201, r.text
            body = r.json()
            assert body["created"] is True
            assert body["feed"]["status"] == "ok"
            assert body["feed"]["entry_count"] > 0
            again = await client.post("/api/v1/feeds", json={"url": blog.url}, headers=AUTH)
            assert again.status_code == 200
            assert again.json()["created"] is False

            site = testbed.catalog(1, ["html-discovery"])[0]
            assert site.final_url is not None
            r = await client.post(
                "/add", data={"url": site.url, "token": TOKEN}, follow_redirects=False
            )
            assert r.status_code == 303, r.text
            feed = store.find_feed(site.final_url)
            assert feed is not None  # the feed found on the page, not the page
            assert feed.status == "ok"  # and crawled before the answer
            assert r.headers["location"] == f"/feeds/{feed.id}?notice=added"

            r = await client.post("/add", data={"url": "ftp://files.test/x", "token": TOKEN})
            assert r.status_code == 422
            assert "Could not add" in r.text
            assert "unsupported scheme" in r.text
        store.close()
