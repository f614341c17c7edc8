"""The text summary of ``crawl --once`` (and of ``feeds refresh`` and the demo, which print the
same line) names the skipped feeds' reasons in words: it printed the Python dict,
``skipped {'deferred (key paused)': 23}``, the first thing a newcomer sees after ``make demo``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from fairfetch.net.politeness import politeness_key
from fairfetch.store import open_store
from fairfetch.testing import Testbed, testbed_thread

from .conftest import Cli


@pytest.fixture(scope="module")
def stingy() -> Iterator[Testbed]:
    """A newsletter platform that takes one request, then throttles (Retry-After 60 s)."""
    with testbed_thread(seed=3, letterbox_rate=0.0001, letterbox_burst=1) as testbed:
        yield testbed


def test_walkthrough_crawl_once_names_skipped_reasons_in_words(
    stingy: Testbed, tmp_path: Path
) -> None:
    db = f"sqlite:///{tmp_path}/skipped.db"
    specs = stingy.catalog(n=5, behaviours=["letterbox"])
    store = open_store(db)
    now = datetime.now(UTC)
    for spec in specs:
        store.add_feed(spec.url, now=now, politeness_key=politeness_key(spec.url))
    store.close()
    # one request at a time on the platform: one answer, one throttle, the rest wait for the key
    cli = Cli({**stingy.env(), "FAIRFETCH_DB": db, "FAIRFETCH_PER_KEY_IN_FLIGHT": "1"})
    r = cli.ok("crawl", "--once")
    summary = [line for line in r.stdout.splitlines() if line.startswith("due ")]
    assert summary, r.stdout
    assert "{" not in r.stdout, r.stdout
    assert "}" not in r.stdout, r.stdout
    found = re.match(
        r"due 5: ok (\d), not modified 0, throttled (\d), failed 0, skipped (\d);", summary[0]
    )
    assert found, summary[0]
    ok, throttled, skipped = map(int, found.groups())
    assert throttled >= 1
    assert skipped >= 1
    assert ok + throttled + skipped == 5
    assert f"skipped by reason: deferred (key paused) {skipped}" in r.stdout.splitlines()


def test_walkthrough_refresh_that_could_not_crawl_every_feed_exits_1(
    stingy: Testbed, tmp_path: Path
) -> None:
    """A refresh is an explicit request to crawl these feeds now: when some could not be
    (their key paused by a throttle met during the refresh), it says which and why, and exits
    1, as docs/crawling.md and its --help say. Unlike ``crawl --once``, for which they are data."""
    db = f"sqlite:///{tmp_path}/refresh.db"
    urls = [spec.url for spec in stingy.catalog(n=4, behaviours=["letterbox"])]
    store = open_store(db)
    now = datetime.now(UTC)
    for url in urls:
        store.add_feed(url, now=now, politeness_key=politeness_key(url))
    store.close()
    cli = Cli({**stingy.env(), "FAIRFETCH_DB": db, "FAIRFETCH_PER_KEY_IN_FLIGHT": "1"})
    r = cli("feeds", "refresh", *urls)
    assert r.exit_code == 1, (r.output, r.exception)
    found = re.search(r"skipped by reason: deferred \(key paused\) (\d)", r.stdout)
    assert found, r.stdout
    assert int(found.group(1)) >= 1
