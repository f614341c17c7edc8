"""Feed health over weeks of simulated time: the pure decision applied crawl after crawl, with
the clock moved by hand (no sleeps), against DESIGN.md's table and the schedule's promises."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from fairfetch.crawl.health import FeedState, HealthPolicy, Outcome, decide

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
POLICY = HealthPolicy()
MONTH = timedelta(days=30)


def apply(state: FeedState, outcome: Outcome, now: datetime) -> FeedState:
    d = decide(state, outcome, now, POLICY)
    known = {k: v for k, v in d.changes.items() if hasattr(state, k)}
    return replace(state, **known)


def gone_dead() -> FeedState:
    """A feed a 410 made dead at once: one failure on its count."""
    fine = FeedState(
        url="https://a.example/feed",
        status="ok",
        last_success_at=NOW - timedelta(days=2),
        last_fetched_at=NOW - timedelta(hours=1),
        next_crawl_at=NOW,
        interval_seconds=3600.0,
    )
    return apply(fine, Outcome("error", error_kind="gone", http_status=410), NOW)


@pytest.mark.parametrize(
    "failure",
    [
        Outcome("error", error_kind="timeout"),
        Outcome("error", error_kind="http", http_status=404, error_detail="HTTP 404"),
        Outcome("error", error_kind="dns", error_detail="no such host"),
        Outcome("error", error_kind="gone", http_status=410),
        Outcome("error", error_kind="not_a_feed", http_status=200),
    ],
    ids=["timeout", "404", "dns", "410", "not_a_feed"],
)
def test_a_dead_feeds_failed_monthly_probe_leaves_it_dead(failure: Outcome) -> None:
    """Dead is revived by a success (DESIGN.md), not by another failure: a feed a 410 made dead
    (error_count 1) whose monthly probe timed out or answered 404 came back as ``error`` on the
    ladder and was fetched again within the hour, eight more times before it was dead again."""
    state = gone_dead()
    assert state.status == "dead"
    assert state.error_count == 1
    for month in range(1, 13):
        probe_at = NOW + month * MONTH
        state = apply(state, failure, probe_at)
        assert state.status == "dead", f"probe {month} revived a dead feed by failing"
        assert state.next_crawl_at is None, "dead feeds wait for their monthly probe"
        assert state.last_fetched_at == probe_at  # the probe read the publisher
        assert state.error_count == 1 + month
    # A success still revives it.
    state = apply(state, Outcome("ok", http_status=200), NOW + 13 * MONTH)
    assert state.status == "ok"
    assert state.error_count == 0
    assert state.next_crawl_at is not None


def test_a_dead_feeds_throttled_probe_touches_only_next_crawl_at() -> None:
    dead = gone_dead()
    d = decide(dead, Outcome("throttled", http_status=429, retry_after=600.0), NOW + MONTH, POLICY)
    assert set(d.changes) == {"next_crawl_at"}
