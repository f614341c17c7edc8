"""Review of 54ed7a2/fbacf7f (crawl/loop.py: ``_waiting_asked``, ``_defer_paused_keys``).

A refresh is deferred when its key "may not start for DEFER_AFTER or more", measured with
``state.startable_at(key)``: that is the Retry-After pause *or* the key's spacing (a
robots.txt ``Crawl-delay``, a ``key_overrides`` gap, AIMD). So ``feeds refresh A B`` of two
feeds of a site whose robots.txt says ``Crawl-delay: 15`` fetches A, then, a second later,
gives B up as ``deferred (key paused)`` (CLI exit 1) although nothing paused the key: the
publisher only asked for spacing. Before 54ed7a2 B was fetched after the 15 s the publisher
asked for. Fixed: a refresh or ping queued on a key is deferred on the key's pause only
(``PolitenessState.paused_until``), and waits out its spacing as before.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from aiohttp import web

from fairfetch.config import Settings
from fairfetch.crawl import Crawler, utcnow
from fairfetch.net.politeness import politeness_key
from fairfetch.store import open_store
from fairfetch.testing import loopback_server

_FEED = b"""<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>
<link>http://example.test/</link><item><guid>1</guid><title>one</title></item></channel></rss>"""


@pytest.mark.slow  # once fixed, it waits out the 15 s Crawl-delay
async def test_review_s10_refresh_of_two_feeds_under_a_crawl_delay_fetches_both(
    tmp_path: Path,
) -> None:
    seen: Counter[str] = Counter()

    async def handler(request: web.Request) -> web.StreamResponse:
        seen[request.path] += 1
        if request.path == "/robots.txt":
            return web.Response(text="User-agent: *\nCrawl-delay: 15\n")
        return web.Response(body=_FEED, content_type="application/rss+xml")

    async with loopback_server(handler) as port:
        urls = [f"http://blog.test:{port}/a.xml", f"http://blog.test:{port}/b.xml"]
        store = open_store(f"sqlite:///{tmp_path}/refresh.db")
        try:
            now = utcnow()
            ids = [
                store.add_feed(u, now=now, politeness_key=politeness_key(u))[0].id for u in urls
            ]
            settings = Settings(
                db=store.url,
                allow_networks=("127.0.0.1/32",),
                resolve=("*.test:127.0.0.1",),
                connect_timeout=5.0,
                first_byte_timeout=5.0,
                total_timeout=10.0,
            )
            async with Crawler(store, settings) as crawler:
                summary = await crawler.refresh(ids)
        finally:
            store.close()
    assert summary.skipped["deferred (key paused)"] == 0, summary.as_dict()
    assert seen["/a.xml"] == 1
    assert seen["/b.xml"] == 1
