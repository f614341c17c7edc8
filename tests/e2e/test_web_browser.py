"""The directory in a real browser: home, search, /podcasts, a feed page, adding a feed through
the form (and seeing it crawled), /crawlstats and its chart. Screenshots go to
test-artifacts/web/ for people to look at."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from fairfetch.crawl import Crawler
from fairfetch.testing import running_testbed

from .conftest import TOKEN, open_tmp_store, shot_path, start_site

pytestmark = pytest.mark.e2e


async def test_web_directory_in_the_browser(browser: Any, tmp_path: Path) -> None:
    async with running_testbed(seed=3) as testbed:
        store = open_tmp_store(tmp_path)
        settings = testbed.settings(db=store.url, admin_token=TOKEN)
        crawler = Crawler(store, settings)
        podcasts = testbed.catalog(3, ["podcast"])
        blogs = testbed.catalog(3, ["blog"])
        report = await crawler.add([s.url for s in podcasts + blogs[:2]])
        assert len(report.added) == 5, report
        url, stop = await start_site(settings, store, crawler)
        try:
            page = await browser.new_page()

            # home
            await page.goto(url + "/")
            assert await page.locator("#home-q").is_visible()
            await page.screenshot(path=shot_path("01-home"), full_page=True)

            # search for a word of a crawled feed's title
            pod = store.find_feed(podcasts[0].url)
            assert pod is not None
            assert pod.title
            word = max(re.findall(r"[^\W_]+", pod.title), key=len)
            await page.fill("#home-q", word)
            await page.press("#home-q", "Enter")
            await page.wait_for_url(re.compile(r"/search\?q="))
            titles = await page.locator("a.feed-title").all_inner_texts()
            assert pod.title in titles
            await page.screenshot(path=shot_path("02-search"), full_page=True)

            # /podcasts from the navigation
            await page.click("nav >> text=Podcasts")
            await page.wait_for_url(url + "/podcasts")
            listed = await page.locator("a.feed-title").all_inner_texts()
            assert len(listed) == 3
            assert all(store.find_feed(p.url).title in listed for p in podcasts)  # type: ignore[union-attr]
            await page.screenshot(path=shot_path("03-podcasts"), full_page=True)

            # a feed page
            await page.click(f"a.feed-title >> text={pod.title}")
            await page.wait_for_url(f"{url}/feeds/{pod.id}")
            assert await page.locator("#feed-title").inner_text() == pod.title
            assert "ok" in await page.locator("#feed-status").inner_text()
            assert await page.locator("#crawl-history tbody tr").count() >= 1
            assert "podcast" in await page.locator("section.kind h2").inner_text()
            await page.screenshot(path=shot_path("04-feed"), full_page=True)

            # add a feed through the form; the page it lands on shows it crawled
            new = blogs[2]
            await page.goto(url + "/add")
            await page.fill("#add-url", new.url)
            await page.fill("#add-token", TOKEN)
            await page.click("#add-submit")
            await page.wait_for_url(re.compile(r"/feeds/\d+\?notice=added"))
            added = store.find_feed(new.url)
            assert added is not None
            assert added.status == "ok"
            assert added.entry_count > 0
            assert "ok" in await page.locator("#feed-status").inner_text()
            assert "Feed added and crawled." in await page.locator(".notice").inner_text()
            history = await page.locator("#crawl-history tbody").inner_text()
            assert "add" in history or "poll" in history
            await page.screenshot(path=shot_path("05-added"), full_page=True)

            # the refresh button (the token is now a cookie: no field to fill)
            assert await page.locator("input[name=token]").count() == 0
            before = len(store.feed_details(added.id)["crawls"])
            await page.click("#refresh-button")
            await page.wait_for_url(re.compile(r"notice=refreshed"))
            assert len(store.feed_details(added.id)["crawls"]) == before + 1

            # /crawlstats and its chart
            await page.click("nav >> text=Crawl stats")
            await page.wait_for_url(url + "/crawlstats")
            chart = page.locator("svg#crawl-chart")
            assert await chart.is_visible()
            assert await chart.locator("rect.bar-ok").count() >= 1
            await page.screenshot(path=shot_path("06-crawlstats"), full_page=True)
        finally:
            await stop()
            await crawler.aclose()
            store.close()
