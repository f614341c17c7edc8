"""A feed added through the form whose first crawl failed is not announced as crawled: the
page it lands on says the first crawl failed and why, as the API's answer does (problem)."""

from __future__ import annotations

from pathlib import Path

import httpx

from fairfetch.config import Settings
from fairfetch.store import open_store
from fairfetch.web.app import create_app

from .conftest import TOKEN


async def test_web_form_add_whose_first_crawl_failed_says_so(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path}/add.db")
    # 127.0.0.2 is loopback and not allowed: the perimeter refuses it, no connection is made
    app = create_app(Settings(db=store.url, admin_token=TOKEN), store)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(
        transport=transport, base_url="http://web.test", follow_redirects=True
    ) as client:
        r = await client.post("/add", data={"url": "http://127.0.0.2/feed.xml", "token": TOKEN})
        assert r.status_code == 200, r.text
        feed = store.find_feed("http://127.0.0.2/feed.xml")
        assert feed is not None
        assert feed.status == "error"
        assert "Feed added and crawled." not in r.text
        notice = r.text.split('<p class="notice" role="status">', 1)[1].split("</p>", 1)[0]
        assert "first crawl failed" in notice
        assert "perimeter" in r.text  # the reason, on the page (Last error)

        again = await client.post("/add", data={"url": "http://127.0.0.2/feed.xml", "token": TOKEN})
        assert "That feed was already in the directory." in again.text
    store.close()
