"""``fairfetch run --port P`` on a port another process holds: refused, and nothing else done.

The crawler, the notifier and the web started together, so the crawler's first pass ran (every
due feed fetched, its health written, mails possibly sent) while the web failed to bind, and
the command then ended with "could not serve": a start that failed had still crawled."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import pytest

from fairfetch.crawl import utcnow
from fairfetch.errors import ConfigError
from fairfetch.net.politeness import politeness_key
from fairfetch.store import open_store
from fairfetch.testing import running_testbed
from fairfetch.web.serve import run_all


async def test_walk_s12_directory_run_on_a_taken_port_crawls_nothing(tmp_path: Path) -> None:
    async with running_testbed(seed=12) as testbed:
        store = open_store(f"sqlite:///{tmp_path}/run.db")
        try:
            [spec] = testbed.catalog(n=1, behaviours=["blog"])
            feed, _ = store.add_feed(
                spec.url, now=utcnow(), politeness_key=politeness_key(spec.url)
            )
            with socket.socket() as taken:
                taken.bind(("127.0.0.1", 0))
                taken.listen()
                port = taken.getsockname()[1]
                with pytest.raises(ConfigError, match=f"127.0.0.1:{port}"):
                    await asyncio.wait_for(
                        run_all(
                            testbed.settings(db=store.url), store, asyncio.Event(),
                            host="127.0.0.1", port=port,
                        ),
                        60,
                    )
            after = store.find_feed(feed.id)
            assert after is not None
            assert after.status == "new"
            assert after.last_fetched_at is None
            assert (await testbed.stats())["total"]["requests"] == 0
        finally:
            store.close()
