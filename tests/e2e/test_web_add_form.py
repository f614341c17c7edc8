"""The add form in a real browser takes what the page asks for: "the address of a site".

The server reads a bare host ("blog.test", "blog.test/feed.xml") as https://…, like `feeds add`;
the browser must let such an address through to it instead of stopping it at the field.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from fairfetch.config import Settings

from .conftest import TOKEN, open_tmp_store, start_site

pytestmark = pytest.mark.e2e


async def test_web_add_form_takes_a_site_address_without_a_scheme(
    browser: Any, tmp_path: Path
) -> None:
    store = open_tmp_store(tmp_path)
    # *.test resolves to a loopback address the perimeter refuses: the add fetches nothing
    settings = Settings(db=store.url, admin_token=TOKEN, resolve=("*.test:127.0.0.2",))
    url, stop = await start_site(settings, store, None)
    try:
        page = await browser.new_page()
        await page.goto(url + "/add")
        field = page.locator("#add-url")
        for typed in ("blog.test", "blog.test/feed.xml", "https://blog.test/feed.xml"):
            await field.fill(typed)
            assert await field.evaluate("e => e.checkValidity()"), typed
        await field.fill("")
        assert not await field.evaluate("e => e.checkValidity()")  # still required

        await field.fill("blog.test/feed.xml")
        await page.fill("#add-token", TOKEN)
        async with page.expect_navigation():
            await page.click("#add-submit")
        await page.wait_for_url(re.compile(r"/feeds/\d+\?notice=added"))
        feed = store.find_feed("https://blog.test/feed.xml")
        assert feed is not None
        assert feed.original_url == "https://blog.test/feed.xml"
        assert feed.added_at <= datetime.now(UTC)
        assert "perimeter" in (feed.last_error or "")
    finally:
        await stop()
        store.close()
