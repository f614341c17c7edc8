"""What a feed may name itself must not break the page around it: an unbroken string thousands
of characters long, or right-to-left text beside our own dates and separators. Checked where
it shows, in Chromium's layout."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from fairfetch.config import Settings
from fairfetch.feeds.model import Contact, Entry, Person
from fairfetch.store import CrawlWrite, SqlStore

from .conftest import TOKEN, open_tmp_store, shot_path, start_site

pytestmark = pytest.mark.e2e

WIDTH = 1024


def _crawled(
    store: SqlStore,
    url: str,
    *,
    entries: Sequence[Entry] = (),
    authors: Sequence[tuple[Person, str]] | None = None,
    contacts: Sequence[Contact] | None = None,
    **changes: Any,
) -> int:
    """A feed added and crawled once, through the crawler's write path."""
    at = datetime.now(UTC) - timedelta(minutes=1)
    key = url.split("/")[2]
    feed, _ = store.add_feed(url, now=at, politeness_key=key)
    store.write(
        [
            CrawlWrite(
                feed_id=feed.id,
                url=url,
                at=at,
                outcome="ok",
                politeness_key=key,
                feed_changes={"kind": "blog", "status": "ok", "last_fetched_at": at, **changes},
                http_status=200,
                bytes=100,
                duration=0.1,
                entries=list(entries),
                authors=authors,
                contacts=contacts,
                first_crawl=True,
            )
        ]
    )
    return feed.id


async def test_web_long_unbroken_feed_strings_do_not_widen_any_page(
    browser: Any, tmp_path: Path
) -> None:
    store = open_tmp_store(tmp_path)
    title = "Longcast " + "W" * 3000
    fid = _crawled(
        store,
        "http://long.test/" + "p" * 1500,
        title=title,
        description="D" * 3000,
        link="http://long.test/" + "s" * 1500,
        status="error",
        error_count=3,
        last_error="http: " + "E" * 1500,
        categories=["C" * 1500],
        kind_evidence=["K" * 1500],
        authors=[(Person("N" * 1500, None, "http://long.test/" + "a" * 1500), "author")],
        contacts=[Contact("http://long.test/" + "c" * 1500, "web", "author")],
        entries=[
            Entry(
                id="x" * 1500,
                title="T" * 3000,
                link="http://long.test/" + "e" * 1500,
                summary="<p>" + "S" * 3000 + "</p><pre>" + "P" * 3000 + "</pre>",
                authors=[Person("M" * 1500, None, None)],
            )
        ],
    )
    settings = Settings(db=store.url, admin_token=TOKEN)
    url, stop = await start_site(settings, store, None)
    try:
        page = await browser.new_page(viewport={"width": WIDTH, "height": 800})
        for path, shown in (
            ("/", "T" * 20),  # the latest entries
            ("/feeds", title[:20]),
            ("/blogs", title[:20]),
            ("/feeds?status=error", title[:20]),
            ("/search?q=longcast", title[:20]),
            (f"/feeds/{fid}", title[:20]),
            ("/crawlstats", title[:20]),  # dead and erroring feeds
        ):
            await page.goto(url + path)
            assert shown in await page.locator("main").inner_text(), path
            width = await page.evaluate("document.documentElement.scrollWidth")
            if width > WIDTH:
                await page.screenshot(path=shot_path("long-strings-overflow"), full_page=False)
            assert width <= WIDTH, (path, width)
        await page.goto(f"{url}/feeds/{fid}")
        # Wrapped, not cut: the page shows the whole title the store holds. A title past the
        # title index's budget (1,200 bytes) is stored as its head, "…#" and a digest (ea008ed:
        # on PostgreSQL it failed the crawl batch), so that head is what there is to show.
        stored = store.get_feed(fid).title
        assert stored is not None
        assert stored.startswith("Longcast " + "W" * 1000)
        assert await page.locator("#feed-title").inner_text() == stored
        await page.screenshot(path=shot_path("08-long-strings"), full_page=False)
    finally:
        await stop()
        store.close()


#: Where each fragment of a text node starts on screen, left to right.
_LEFTS = """([selector, parts]) => {
  const el = document.querySelector(selector);
  const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  const out = {};
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    for (const part of parts) {
      const i = n.data.indexOf(part);
      if (i < 0 || part in out) continue;
      const r = document.createRange();
      r.setStart(n, i);
      r.setEnd(n, i + part.length);
      out[part] = r.getBoundingClientRect().left;
    }
  }
  return out;
}"""


async def test_web_right_to_left_feed_text_keeps_our_dates_and_lists_in_order(
    browser: Any, tmp_path: Path
) -> None:
    store = open_tmp_store(tmp_path)
    first, second = "محمد", "علي"
    entry_title = "مقالة جديدة"
    fid = _crawled(
        store,
        "http://rtl.test/feed",
        title="مدونة عربية",
        categories=["تقنية", "علوم"],
        entries=[
            Entry(
                id="r1",
                title=entry_title,
                link="http://rtl.test/1",
                published=datetime(2026, 11, 30, 9, 15, 0, tzinfo=UTC),
                authors=[Person(first, None, None), Person(second, None, None)],
            )
        ],
    )
    settings = Settings(db=store.url, admin_token=TOKEN)
    url, stop = await start_site(settings, store, None)
    try:
        page = await browser.new_page(viewport={"width": WIDTH, "height": 800})
        await page.goto(url + "/")
        stamp = await page.locator("ul.entries li small").first.inner_text()
        day, clock, zone = stamp.split()
        at = await page.evaluate(_LEFTS, ["ul.entries li", [entry_title, day, clock, zone]])
        await page.screenshot(path=shot_path("09-rtl-home"), full_page=False)
        # an LTR page: the title, then the date as we wrote it (day, time, UTC)
        assert at[entry_title] < at[day] < at[clock] < at[zone], at

        await page.goto(f"{url}/feeds/{fid}")
        at = await page.evaluate(_LEFTS, ["article.entry p.meta", ["2026-11-30", first, second]])
        assert at["2026-11-30"] < at[first] < at[second], at  # authors in the feed's order
        at = await page.evaluate(_LEFTS, ["section.kind", ["تقنية", "علوم"]])
        assert at["تقنية"] < at["علوم"], at  # categories in the feed's order
        await page.screenshot(path=shot_path("10-rtl-feed"), full_page=True)
    finally:
        await stop()
        store.close()
