"""A feed that tries to run script in the directory: nothing executes, nothing is lost.

The feed is served by a real HTTP server on loopback and added through the crawler, so the
hostile strings travel the whole way (fetch, parse, store, render). The browser context bypasses
the Content-Security-Policy, so what is checked is the escaping and sanitising themselves, not
the CSP that backs them up.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from fairfetch.crawl import Crawler
from fairfetch.feeds.parse import parse_feed
from fairfetch.testing import running_testbed

from .conftest import TOKEN, open_tmp_store, shot_path, start_site

pytestmark = pytest.mark.e2e

MARK = "window.__pwned = (window.__pwned || 0) + 1"

HOSTILE = f"""<?xml version="1.0" encoding="utf-8"?>
<rss version="2.0" xmlns:dc="http://purl.org/dc/elements/1.1/">
<channel>
  <title>Evil &lt;script&gt;{MARK}&lt;/script&gt; &lt;img src=x onerror="{MARK}"&gt; cast</title>
  <link>javascript:{MARK}</link>
  <description>&lt;p onmouseover="{MARK}"&gt;Hi&lt;/p&gt;&lt;script&gt;{MARK}&lt;/script&gt;
  </description>
  <managingEditor>evil@evil.test (&lt;script&gt;{MARK}&lt;/script&gt;)</managingEditor>
  <item>
    <title>&lt;svg onload="{MARK}"&gt;&lt;/svg&gt;Item one</title>
    <link>javascript:{MARK}</link>
    <guid isPermaLink="false">evil-1</guid>
    <dc:creator>&lt;b onclick="{MARK}"&gt;Mallory&lt;/b&gt;</dc:creator>
    <description><![CDATA[<p>Read <a href="javascript:{MARK}">this</a> and
      <a href="data:text/html,<script>{MARK}</script>">that</a>
      <img src="x" onerror="{MARK}"><iframe src="javascript:{MARK}"></iframe>
      <script>{MARK}</script><style>body{{display:none}}</style>
      <a href="http://fine.evil.test/">fine</a></p>]]></description>
  </item>
  <item>
    <title>"&gt;&lt;script&gt;{MARK}&lt;/script&gt;</title>
    <link>data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==</link>
    <guid isPermaLink="false">evil-2</guid>
    <description>&lt;a href="  JaVaScRiPt:{MARK}"&gt;x&lt;/a&gt;</description>
  </item>
</channel>
</rss>
""".encode()


@pytest.fixture
async def hostile_server() -> AsyncIterator[str]:
    async def feed(_request: web.Request) -> web.Response:
        return web.Response(body=HOSTILE, content_type="application/rss+xml")

    app = web.Application()
    app.router.add_get("/evil.xml", feed)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield f"http://127.0.0.1:{port}/evil.xml"
    finally:
        await runner.cleanup()


async def test_web_hostile_feed_runs_nothing_and_loses_nothing(
    browser: Any, hostile_server: str, tmp_path: Path
) -> None:
    async with running_testbed() as testbed:
        store = open_tmp_store(tmp_path)
        settings = testbed.settings(db=store.url, admin_token=TOKEN)
        crawler = Crawler(store, settings)
        report = await crawler.add([hostile_server])
        assert report.added, report
        feed = store.find_feed(hostile_server)
        assert feed is not None
        assert feed.status == "ok"

        # nothing lost: what is stored is exactly what the parser read from the feed
        parsed = parse_feed(HOSTILE, url=hostile_server)
        assert "<script>" in (parsed.title or "")
        assert feed.title == parsed.title
        assert feed.link == parsed.link
        assert feed.description == parsed.description
        stored = {e["entry_id"]: e for e in store.entries_of(feed.id)}
        assert set(stored) == {e.id for e in parsed.entries}
        for e in parsed.entries:
            row = stored[e.id]
            assert (row["title"], row["link"], row["summary"]) == (e.title, e.link, e.summary)

        url, stop = await start_site(settings, store, crawler)
        try:
            context = await browser.new_context(bypass_csp=True, java_script_enabled=True)
            dialogs: list[str] = []
            page = await context.new_page()
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            for path in (f"/feeds/{feed.id}", "/feeds", "/search?q=evil", "/"):
                await page.goto(url + path)
                # hover and click everything a handler could hang on
                for el in await page.locator("main *").all():
                    if await el.is_visible():
                        await el.hover(timeout=2000, force=True)
                assert await page.evaluate("window.__pwned || 0") == 0, path
                hrefs = await page.eval_on_selector_all(
                    "a[href]", "els => els.map(e => e.getAttribute('href'))"
                )
                for href in hrefs:
                    low = href.strip().lower()
                    assert not low.startswith(("javascript:", "data:", "vbscript:")), (path, href)
                assert await page.locator("main script, main iframe, main img").count() == 0
                handlers = await page.evaluate(
                    "[...document.querySelectorAll('*')].flatMap(e => [...e.attributes]"
                    ".filter(a => a.name.startsWith('on')).map(a => e.tagName + ' ' + a.name))"
                )
                assert handlers == [], (path, handlers)
            await page.goto(f"{url}/feeds/{feed.id}")
            # the hostile text is shown as text, whole
            assert parsed.title == await page.locator("#feed-title").inner_text()
            # the site link and both entry links are refused as links and shown as text
            unsafe = await page.locator("span.unsafe-url").all_inner_texts()
            assert feed.link in unsafe
            assert {stored["evil-1"]["title"], stored["evil-2"]["title"]} <= set(unsafe)
            await page.screenshot(path=shot_path("07-hostile-feed"), full_page=True)
            assert await page.evaluate("window.__pwned || 0") == 0
            assert dialogs == []
            await context.close()
        finally:
            await stop()
            await crawler.aclose()
            store.close()
