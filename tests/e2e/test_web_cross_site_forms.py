"""The directory's writing forms in a real browser, posted from another site's page.

The admin cookie is SameSite=Strict, but "site" ignores the port (and any sibling host under
the same registrable domain): a page served from 127.0.0.1 on another port is same-site, so
Chromium sends the cookie with its form posts. Only the directory's own pages may write.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from fairfetch.config import Settings
from fairfetch.store import CrawlWrite

from .conftest import TOKEN, open_tmp_store, start_site

pytestmark = pytest.mark.e2e


#: (path, headers) of every request the other site got, in order.
OTHER_SITE_REQUESTS: list[tuple[str, dict[str, str]]] = []


@pytest.fixture
async def other_site() -> AsyncIterator[Callable[[str], str]]:
    """Another web server on loopback; ``page(html)`` serves ``html`` and returns its URL."""
    pages: dict[str, str] = {}
    OTHER_SITE_REQUESTS.clear()

    async def serve(request: web.Request) -> web.Response:
        headers = {k.lower(): v for k, v in request.headers.items()}
        OTHER_SITE_REQUESTS.append((request.path, headers))
        html = pages.get(request.match_info["name"])
        if html is None:
            raise web.HTTPNotFound
        return web.Response(text=html, content_type="text/html")

    app = web.Application()
    app.router.add_get("/{name}", serve)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    def page(html: str) -> str:
        name = f"p{len(pages)}"
        pages[name] = html
        return f"http://127.0.0.1:{port}/{name}"

    try:
        yield page
    finally:
        await runner.cleanup()


async def test_web_forms_posted_from_another_site_write_nothing(
    browser: Any, other_site: Callable[[str], str], tmp_path: Path
) -> None:
    store = open_tmp_store(tmp_path)
    now = datetime.now(UTC)
    first, _ = store.add_feed("http://first.test/feed.xml", now=now, politeness_key="first.test")
    kept, _ = store.add_feed("http://kept.test/feed.xml", now=now, politeness_key="kept.test")
    # every *.test host resolves to a loopback address the perimeter refuses: a write that got
    # through could fetch nothing, anywhere
    settings = Settings(db=store.url, admin_token=TOKEN, resolve=("*.test:127.0.0.2",))
    url, stop = await start_site(settings, store, None)
    try:
        context = await browser.new_context()
        page = await context.new_page()

        # the admin deletes a feed on the directory's own page: the cookie is set
        await page.goto(f"{url}/feeds/{first.id}")
        await page.locator("form[action$='/delete'] input[name=token]").fill(TOKEN)
        await page.locator("form[action$='/delete'] button").click()
        await page.wait_for_url(f"{url}/feeds?notice=deleted")
        assert store.find_feed(first.url) is None
        assert any(c["name"] == "fairfetch_admin" for c in await context.cookies())

        # then visits another site on the same host, whose forms post to the directory
        for action in (f"/feeds/{kept.id}/delete", f"/feeds/{kept.id}/refresh", "/add"):
            html = (
                f'<form method="post" action="{url}{action}">'
                '<input type="hidden" name="url" value="http://planted.test/feed.xml">'
                '<button id="go">win a prize</button></form>'
            )
            await page.goto(other_site(html))
            async with page.expect_navigation() as nav:
                await page.click("#go")
            response = await nav.value
            assert response is not None
            assert response.status == 403, (action, response.status)
            assert "another site" in await page.locator(".problem").inner_text()
        assert store.find_feed(kept.url) is not None
        assert store.feed_details(kept.id)["crawls"] == []
        assert store.find_feed("http://planted.test/feed.xml") is None

        # the directory's own forms still work with the cookie alone
        await page.goto(f"{url}/feeds/{kept.id}")
        assert await page.locator("input[name=token]").count() == 0
        await page.locator("form[action$='/delete'] button").click()
        await page.wait_for_url(f"{url}/feeds?notice=deleted")
        assert store.find_feed(kept.url) is None
        await context.close()
    finally:
        await stop()
        store.close()


async def test_web_own_forms_say_their_origin_and_links_out_send_no_referrer(
    browser: Any, other_site: Callable[[str], str], tmp_path: Path
) -> None:
    """The directory's own posts carry its origin (a browser without Sec-Fetch-Site is judged by
    it), while a link out to a publisher still tells it nothing of the page it came from.
    With Referrer-Policy: no-referrer, Chromium sent 'Origin: null' with our own forms."""
    store = open_tmp_store(tmp_path)
    publisher = other_site("<p>the publisher's site</p>")
    now = datetime.now(UTC)
    feed, _ = store.add_feed("http://site.test/feed.xml", now=now, politeness_key="site.test")
    store.write(
        [
            CrawlWrite(
                feed_id=feed.id,
                url=feed.url,
                at=now,
                outcome="ok",
                politeness_key="site.test",
                feed_changes={"status": "ok", "title": "Site", "link": publisher},
            )
        ]
    )
    settings = Settings(db=store.url, admin_token=TOKEN, resolve=("*.test:127.0.0.2",))
    url, stop = await start_site(settings, store, None)
    try:
        page = await browser.new_page()
        posts: list[dict[str, str]] = []

        async def record(request: Any) -> None:
            if request.method == "POST":
                posts.append(await request.all_headers())

        page.on("requestfinished", record)
        await page.goto(f"{url}/add")
        await page.fill("#add-url", "http://planted.test/feed.xml")
        await page.fill("#add-token", "not the token")
        async with page.expect_navigation():
            await page.click("#add-submit")
        assert posts, "the form was not posted"
        assert posts[0].get("origin") == url
        assert store.find_feed("http://planted.test/feed.xml") is None  # wrong token: 403

        await page.goto(f"{url}/feeds/{feed.id}")
        async with page.expect_navigation():
            await page.click(f"a[href='{publisher}']")
        # the page's own request (its favicon's names the publisher's page, not ours)
        visits = [h for path, h in OTHER_SITE_REQUESTS if publisher.endswith(path)]
        assert len(visits) == 1
        assert "referer" not in visits[0]
    finally:
        await stop()
        store.close()
