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
    """A few of every behaviour (so the demo shows each failure mode), then the big families
    (blogs, the newsletter platform, podcasts) in turn up to ``limit``."""
    by_behaviour: dict[str, list[FeedSpec]] = {}
    for spec in testbed.catalog():
        by_behaviour.setdefault(spec.behaviour, []).append(spec)
    chosen: list[FeedSpec] = []
    for specs in by_behaviour.values():
        chosen.extend(specs[:2])
    bulk = [specs[2:] for specs in by_behaviour.values() if len(specs) > 20]
    i = 0
    while len(chosen) < limit and any(bulk):
        family = bulk[i % len(bulk)]
        if family:
            chosen.append(family.pop(0))
        i += 1
    return chosen[:limit]


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
            # The simulated web has servers that never answer; a newcomer should not wait a
            # minute for them, so the demo gives up sooner than the defaults.
            first_byte_timeout=5.0,
            total_timeout=10.0,
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
