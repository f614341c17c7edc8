"""The opt-in worker processes (parse_processes >= 1) store what the in-process pass does."""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa

from fairfetch.config import Settings
from fairfetch.crawl import Crawler, utcnow
from fairfetch.net.politeness import politeness_key
from fairfetch.store import SqlStore, open_store
from fairfetch.store.tables import entries
from fairfetch.testing import Testbed


async def _crawl(store: SqlStore, settings: Settings, urls: list[str]) -> dict[str, object]:
    for u in urls:
        store.add_feed(u, now=utcnow(), politeness_key=politeness_key(u))
    async with Crawler(store, settings) as crawler:
        summary = await crawler.crawl_due()
        used_workers = crawler._pool is not None
    cols = (entries.c.feed_id, entries.c.entry_id, entries.c.title, entries.c.content_hash)
    with store.engine.connect() as conn:
        stored = [tuple(r) for r in conn.execute(sa.select(*cols).order_by(*cols[:2]))]
    return {
        "ok": summary.counts["ok"],
        "new": summary.new_entries,
        "entries": stored,
        "workers": used_workers,
    }


async def test_worker_processes_store_what_the_event_loop_does(
    testbed: Testbed, tmp_path: Path
) -> None:
    urls = [s.url for s in testbed.catalog(n=12, behaviours=["blog", "podcast"])]
    results = []
    for processes in (0, 1):
        store = open_store(f"sqlite:///{tmp_path}/p{processes}.db")
        settings = testbed.settings(
            db=store.url, parse_processes=processes, parse_pool_threshold=1
        )
        results.append(await _crawl(store, settings, urls))
        store.close()
    in_process, workers = results
    assert (in_process["workers"], workers["workers"]) == (False, True)
    assert in_process["ok"] == workers["ok"] == len(urls)
    assert {k: v for k, v in in_process.items() if k != "workers"} == {
        k: v for k, v in workers.items() if k != "workers"
    }
    assert in_process["entries"]
