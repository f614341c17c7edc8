"""Fixtures for crawling the testbed: a fresh SQLite store and fast-failing settings."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from fairfetch.config import Settings
from fairfetch.net.politeness import politeness_key
from fairfetch.store import SqlStore, open_store
from fairfetch.testing import Testbed, running_testbed


@pytest.fixture
async def testbed() -> AsyncIterator[Testbed]:
    async with running_testbed(seed=7) as tb:
        yield tb


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqlStore]:
    s = open_store(f"sqlite:///{tmp_path}/crawl.db")
    yield s
    s.close()


@pytest.fixture
def settings(testbed: Testbed, store: SqlStore) -> Settings:
    # Short caps so the slow-drip and silent servers fail fast; the caps themselves are tested
    # in tests/integration/net.
    return testbed.settings(
        db=store.url, connect_timeout=2.0, first_byte_timeout=1.0, total_timeout=2.0
    )


def loopback_settings(db: str) -> Settings:
    """Settings for a crawl of a loopback server of the test's own, its hosts named ``*.test``:
    loose enough caps that a loaded machine does not turn a slow answer into a failure."""
    return Settings(
        db=db,
        allow_networks=("127.0.0.1/32",),
        resolve=("*.test:127.0.0.1",),
        connect_timeout=5.0,
        first_byte_timeout=5.0,
        total_timeout=10.0,
    )


def add_old_and_new(store: SqlStore, port: int, at: datetime) -> tuple[Any, Any]:
    """Two feeds of one loopback site, ``/old.xml`` and ``/new.xml`` (the duplicate tests'
    pair: the old one's permanent redirect lands on the new one's URL)."""
    old = f"http://site.test:{port}/old.xml"
    new = f"http://site.test:{port}/new.xml"
    a, _ = store.add_feed(old, now=at, politeness_key=politeness_key(old))
    b, _ = store.add_feed(new, now=at, politeness_key=politeness_key(new))
    return a, b
