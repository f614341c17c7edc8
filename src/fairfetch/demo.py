"""The demo: the simulated web, a fresh SQLite directory, one crawl, then the whole service.

``fairfetch demo`` (and ``make demo``) is how a newcomer meets fairfetch: it starts the testbed in
a background thread, adds a mix of its feeds to a fresh database, crawls them once with a progress
bar, prints the crawlstats, and then serves the directory (crawler + notifier + web) at a URL it
prints, until interrupted.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from fairfetch.config import Settings
from fairfetch.crawl import utcnow
from fairfetch.net.politeness import politeness_key
from fairfetch.store import SqlStore, open_store
from fairfetch.testbed import FeedSpec, Testbed


@dataclass
class DemoEnv:
    testbed: Testbed
    settings: Settings
    store: SqlStore
    feeds: list[FeedSpec]


def pick_feeds(testbed: Testbed, limit: int) -> list[FeedSpec]:
    specs = testbed.catalog()
    chosen: list[FeedSpec] = []
    per_family: dict[str, int] = {}
    # Round-robin over behaviours so a small limit still shows every family.
    for spec in specs:
        fam = spec.behaviour
        if per_family.get(fam, 0) < max(2, limit // 8):
            chosen.append(spec)
            per_family[fam] = per_family.get(fam, 0) + 1
        if len(chosen) >= limit:
            break
    return chosen


@contextlib.contextmanager
def demo_environment(
    db: str | None, *, feeds: int = 400, port: int = 8080, testbed_port: int = 0, seed: int = 1
) -> Iterator[DemoEnv]:
    from fairfetch.testing import testbed_thread

    with testbed_thread(seed=seed, port=testbed_port, realtime=True) as testbed:
        if db is None:
            path = Path("fairfetch-demo.db")
            for suffix in ("", "-wal", "-shm"):
                with contextlib.suppress(FileNotFoundError):
                    os.remove(str(path) + suffix)
            db = f"sqlite:///{path}"
        settings = testbed.settings(
            db=db,
            public_url=f"http://127.0.0.1:{port}",
            port=port,
            admin_token=os.environ.get("FAIRFETCH_ADMIN_TOKEN", "demo"),
        )
        store = open_store(db)
        now = utcnow()
        chosen = pick_feeds(testbed, feeds)
        for spec in chosen:
            store.add_feed(spec.url, now=now, politeness_key=politeness_key(spec.url))
        try:
            yield DemoEnv(testbed, settings, store, chosen)
        finally:
            store.close()
