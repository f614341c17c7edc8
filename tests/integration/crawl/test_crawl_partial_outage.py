"""A partial outage of our side: our resolver fails, while a few hosts we need no lookup for
(kept-alive connections, here resolve overrides) still answer.

Before: each answer from those few hosts released the failures held so far as the feeds' own
(`error`, +1), and ended the outage, so the next network failures counted again and healthy
feeds walked down the ladder. And once in an outage, every later poll was skipped, so in `run`
the end of an outage was never noticed. Real HTTP on 127.0.0.1; the resolver answers from its
overrides and from a switch, never from the system; the crawler's clocks are driven.
"""

from __future__ import annotations

import socket
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from aiohttp import web

from fairfetch.config import load_settings
from fairfetch.crawl import Crawler
from fairfetch.net.fetch import Fetcher
from fairfetch.net.perimeter import Resolver
from fairfetch.net.politeness import politeness_key
from fairfetch.store import open_store
from fairfetch.store.tables import outages
from fairfetch.testing import loopback_server

RSS = b"""<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>
<link>http://site.test/</link><description>d</description>
<item><title>a</title><guid>a</guid><link>http://site.test/a</link></item>
</channel></rss>"""

DOWN = 40  # feeds on as many registrable domains, which need our resolver
ALIVE = 4  # feeds whose hosts need no lookup (fewer than recover_keys)


async def test_a_few_keys_answering_during_our_outage_count_no_failure_and_recovery_is_seen(
    tmp_path: Path,
) -> None:
    resolver_up = [False]

    async def lookup(host: str, port: int, **kw: Any) -> list[tuple[Any, ...]]:
        if not resolver_up[0]:
            raise socket.gaierror(socket.EAI_AGAIN, f"test resolver down: {host!r}")
        if not host.endswith(".example"):
            raise socket.gaierror(socket.EAI_NONAME, f"test resolver: {host!r} does not exist")
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port))]

    async def handle(request: web.Request) -> web.Response:
        return web.Response(body=RSS, content_type="application/rss+xml")

    store = open_store(f"sqlite:///{tmp_path}/partial.db")
    now = [datetime(2026, 11, 30, 12, 0, tzinfo=UTC)]
    mono = [1000.0]
    async with loopback_server(handle) as port:
        settings = load_settings(
            environ={},
            db=store.url,
            allow_networks="127.0.0.1/32",
            resolve=",".join(f"alive{i}.test:127.0.0.1" for i in range(ALIVE)),
            outage_keys=20,
            obey_robots=False,
            # One fetch at a time, in the order the feeds are due: the interleaving of answers
            # and failures below is then the same on every run.
            global_in_flight=1,
        )
        down = [f"http://down{i}.example:{port}/feed" for i in range(DOWN)]
        alive = [f"http://alive{i}.test:{port}/feed" for i in range(ALIVE)]  # as many keys
        # The answering hosts come first and in between, so their answers arrive among the
        # failures: that is what used to release the held failures and end the outage.
        urls = alive[:2] + down[:10] + alive[2:] + down[10:]
        for u in urls:
            store.add_feed(u, now=now[0], politeness_key=politeness_key(u))
        fetcher = Fetcher(settings, resolver=Resolver(settings.resolve, getaddrinfo=lookup))
        try:
            async with Crawler(
                store, settings, fetcher=fetcher, clock=lambda: now[0], monotonic=lambda: mono[0]
            ) as crawler:
                first = await crawler.crawl_due()
                assert first.due == first.accounted == DOWN + ALIVE
                assert first.outage
                assert first.counts["error"] == 0
                for u in down:  # the negative: no feed pays for our resolver
                    f = store.get_feed(u)
                    assert (f.status, f.error_count, f.last_error) == ("new", 0, None), u
                    assert f.last_fetched_at is None
                with store.engine.connect() as conn:
                    n = conn.execute(sa.select(sa.func.count()).select_from(outages)).scalar_one()
                assert n == 1

                # A minute later, still down: the probes fail, nothing is counted.
                now[0] += timedelta(minutes=1)
                mono[0] += 61.0
                second = await crawler.crawl_due()
                assert second.counts["error"] == 0
                assert crawler.outages.in_outage
                assert all(store.get_feed(u).error_count == 0 for u in down)

                # Our resolver is back: the probes answer, the outage is over, feeds are read.
                resolver_up[0] = True
                for _ in range(3):
                    now[0] += timedelta(minutes=1)
                    mono[0] += 61.0
                    await crawler.crawl_due()
                assert not crawler.outages.in_outage
        finally:
            await fetcher.aclose()
    feeds = list(store.iter_feeds())
    store.close()
    assert len(feeds) == DOWN + ALIVE
    assert all((f.status, f.error_count) == ("ok", 0) for f in feeds)
