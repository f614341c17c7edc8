"""The crawler asks the backend grouper with its own clock, so a group whose evidence has run
out lets its feeds go back to their own keys even when nothing has been throttled since.

Without ``now`` the grouper answers as of the latest throttle it was told of, which in a quiet
long-running process is the throttle that formed the group: the group would hold until some
other host somewhere got throttled."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from aiohttp import web

from fairfetch.config import Settings
from fairfetch.crawl import Crawler, utcnow
from fairfetch.net.politeness import BackendGrouper, politeness_key
from fairfetch.store import SqlStore, open_store
from fairfetch.testing import loopback_server


@pytest.fixture
def grouper_store(tmp_path: Path) -> Iterator[SqlStore]:
    s = open_store(f"sqlite:///{tmp_path}/grouper.db")
    yield s
    s.close()


async def test_crawler_lets_a_group_go_when_its_evidence_has_run_out(
    grouper_store: SqlStore,
) -> None:
    async def throttle(request: web.Request) -> web.Response:
        return web.Response(status=429, headers={"Retry-After": "120"})

    async with loopback_server(throttle) as port:
        settings = Settings(
            db=grouper_store.url,
            allow_networks=("127.0.0.1/32",),
            resolve=("*.test:127.0.0.1",),
            obey_robots=False,
        )
        urls = [f"http://news.alpha.test:{port}/feed", f"http://www.beta.test:{port}/feed"]
        now = utcnow()
        for url in urls:
            grouper_store.add_feed(url, now=now, politeness_key=politeness_key(url))
        async with Crawler(grouper_store, settings) as crawler:
            # Evidence held for no time at all: it has run out by the time anyone asks.
            crawler.grouper = BackendGrouper(hold=0.0)
            summary = await crawler.crawl_due()
            assert summary.counts["throttled"] == 2
            group = "backend:addr:127.0.0.1"
            # The group did form (as of the throttle that formed it)...
            assert crawler.grouper.groups() == {group: ["news.alpha.test", "www.beta.test"]}
            # ...and the crawler, asking as of now, no longer dispatches under it.
            feeds = [grouper_store.get_feed(u) for u in urls]
            assert [crawler._key_for(f) for f in feeds] == ["alpha.test", "beta.test"]
