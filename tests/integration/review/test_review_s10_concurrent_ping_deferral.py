"""Review of 54ed7a2/fbacf7f (crawl/loop.py ``Crawler._defer_paused_keys``).

Every ``_finish`` loop calls ``_defer_paused_keys`` once a second while it waits: in ``run``
the poll pass's and each refresh's or ping's (the WebSub service calls
``refresh([feed], trigger="ping")`` per push) may call it at the same time. For a ping met by
a pause, the new loop over ``_waiting_asked`` deletes the job's entry and then *awaits*
``store.set_due`` before the next job; a second call that began meanwhile takes its own
snapshot of the dict, and deletes (and defers) the jobs the first has not reached yet. When
the first resumes, ``del self._waiting_asked[ref]`` on a job the second already took raises
KeyError out of ``_finish``: the crawl pass (or the refresh, or the ping) fails with it. The
poll path just below deletes every deferred job before its first await, so it has no such
race. No request is made: the key is paused before anything starts. Fixed: the jobs to defer
are taken out of the dict before the first await.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path

from fairfetch.config import Settings
from fairfetch.crawl import Crawler, utcnow
from fairfetch.store import open_store


async def test_review_s10_two_finish_loops_deferring_pings_at_once_do_not_raise(
    tmp_path: Path,
) -> None:
    store = open_store(f"sqlite:///{tmp_path}/pings.db")
    try:
        now = utcnow()
        feeds = [
            store.add_feed(f"http://{n}.platform.test/feed", now=now,
                           politeness_key="platform.test")[0]
            for n in ("a", "b", "c")
        ]
        # Two days out: a ping's deferral makes it due at the key's reopening, so each
        # deferral writes (awaits) set_due.
        store.set_due([f.id for f in feeds], now + timedelta(days=2))
        stored = [store.find_feed(f.id) for f in feeds]
        settings = Settings(db=store.url, allow_networks=("127.0.0.1/32",),
                            resolve=("*.test:127.0.0.2",))
        async with Crawler(store, settings) as crawler:
            futures = []
            for feed in stored:
                assert feed is not None
                futures.append(await crawler._submit(feed, "ping", keep_ids=True))
            # The key is paused after the pings were queued (a neighbour's Retry-After).
            assert crawler._dispatcher is not None
            crawler._dispatcher.pause_for("platform.test", 3600)
            await asyncio.gather(crawler._defer_paused_keys(), crawler._defer_paused_keys())
            results = [f.result() for f in futures]
            assert [r.outcome for r in results] == ["skipped:deferred (key paused)"] * 3
            assert crawler._waiting_asked == {}
    finally:
        store.close()
