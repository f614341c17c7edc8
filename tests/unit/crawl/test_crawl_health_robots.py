"""A robots.txt that answers 5xx while the feed is fine (RFC 9309 §2.3.1.4).

The crawler must not fetch the feed (no good robots.txt answer stands in: complete disallow, for
now), but the publisher forbade nothing and the feed itself did not fail: it is not the feed's
failure. For ``robots_grace`` (30 days, RFC 9309's example of "a reasonably long period") after
the feed's last success — or after it was added, for a feed never read — the crawl is deferred:
``next_crawl_at`` at the feed's own rhythm and ``last_error`` saying why, nothing else. Past that,
a feed we have not been able to read for a month is a failure like any other (the ladder, dead
after the 10th, probed monthly and revived by a success).
"""

from __future__ import annotations

from dataclasses import fields, replace
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fairfetch.crawl.fetch_reading import feed_state
from fairfetch.crawl.health import FeedState, HealthPolicy, Outcome, decide

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
POLICY = HealthPolicy()
GRACE = timedelta(seconds=POLICY.robots_grace)
ROBOTS_5XX = Outcome(
    "error",
    error_kind="robots_unreachable",
    error_detail="robots.txt answered 503; disallowing for now",
)
#: What a deferral must never touch: the feed's health and its read/success history.
UNTOUCHED = {
    "status",
    "error_count",
    "last_success_at",
    "last_fetched_at",
    "interval_seconds",
    "url",
    "redirect_candidate",
    "redirect_candidate_count",
}


def fine(**kw: object) -> FeedState:
    base = FeedState(
        url="https://a.example/feed",
        status="ok",
        error_count=0,
        last_error=None,
        last_success_at=NOW - timedelta(hours=1),
        last_fetched_at=NOW - timedelta(hours=1),
        next_crawl_at=NOW,
        interval_seconds=3600.0,
    )
    return replace(base, **kw)  # type: ignore[arg-type]


def test_a_robots_5xx_touches_next_crawl_at_and_last_error_only() -> None:
    d = decide(fine(), ROBOTS_5XX, NOW, POLICY)
    assert set(d.changes) == {"next_crawl_at", "last_error"}
    assert not set(d.changes) & UNTOUCHED
    assert d.changes["last_error"] == (
        "robots_unreachable: robots.txt answered 503; disallowing for now"
    )
    # Recorded (crawls.outcome, the pass's error count by kind), never hidden.
    assert d.outcome == "error"


def test_a_robots_5xx_waits_the_feeds_own_interval_within_bounds() -> None:
    d = decide(fine(interval_seconds=7200.0), ROBOTS_5XX, NOW, POLICY)
    wait = (d.changes["next_crawl_at"] - NOW).total_seconds()
    assert 7200.0 * (1 - POLICY.jitter) <= wait <= 7200.0 * (1 + POLICY.jitter)
    new = decide(fine(interval_seconds=None), ROBOTS_5XX, NOW, POLICY)
    wait = (new.changes["next_crawl_at"] - NOW).total_seconds()
    assert POLICY.min_interval <= wait <= POLICY.max_interval


def test_a_healthy_feed_behind_a_failing_robots_txt_is_never_dead_within_the_grace() -> None:
    # Today's bug: every crawl was a `robots` failure, and the 10th made the feed dead.
    state = fine()
    now = NOW
    for _ in range(50):
        d = decide(state, ROBOTS_5XX, now, POLICY)
        state = replace(state, **d.changes)
        now = d.changes["next_crawl_at"]
        if now - fine().last_success_at >= GRACE:  # type: ignore[operator]
            break
    assert state.status == "ok"
    assert state.error_count == 0


def test_an_erroring_feed_is_not_pushed_further_by_a_robots_5xx() -> None:
    state = fine(status="error", error_count=9, last_error="timeout: slow")
    d = decide(state, ROBOTS_5XX, NOW, POLICY)
    assert "status" not in d.changes
    assert "error_count" not in d.changes  # the 10th failure is not robots.txt's 5xx


def test_past_the_grace_it_counts_like_any_failure() -> None:
    old = NOW - GRACE - timedelta(seconds=1)
    d = decide(fine(last_success_at=old), ROBOTS_5XX, NOW, POLICY)
    assert d.changes["status"] == "error"
    assert d.changes["error_count"] == 1
    assert d.changes["last_fetched_at"] == NOW
    dead = decide(
        fine(last_success_at=old, status="error", error_count=9), ROBOTS_5XX, NOW, POLICY
    )
    assert dead.changes["status"] == "dead"


def test_a_feed_never_read_has_its_grace_from_when_it_was_added() -> None:
    new = fine(last_success_at=None, last_fetched_at=None, added_at=NOW - timedelta(days=2))
    assert set(decide(new, ROBOTS_5XX, NOW, POLICY).changes) == {"next_crawl_at", "last_error"}
    stale = replace(new, added_at=NOW - GRACE)
    assert decide(stale, ROBOTS_5XX, NOW, POLICY).changes["error_count"] == 1
    unknown = replace(new, added_at=None)
    assert decide(unknown, ROBOTS_5XX, NOW, POLICY).changes["error_count"] == 1


@pytest.mark.parametrize("kind", ["robots", "dns", "connect", "timeout", "http"])
def test_other_kinds_still_count(kind: str) -> None:
    # A Disallow is the publisher's word; an unreachable origin is the feed's host failing.
    d = decide(fine(), Outcome("error", error_kind=kind), NOW, POLICY)
    assert d.changes["error_count"] == 1
    assert d.changes["status"] == "error"


def test_feed_state_carries_added_at() -> None:
    assert "added_at" in {f.name for f in fields(FeedState)}

    class Row:
        url = "https://a.example/feed"
        status = "ok"
        error_count = 0
        last_error = None
        last_success_at = None
        last_fetched_at = None
        next_crawl_at = None
        interval_seconds = None
        redirect_candidate = None
        redirect_candidate_count = 0
        added_at = NOW
        newest_entry_at = None

    assert feed_state(Row()).added_at == NOW  # type: ignore[arg-type]


@given(
    status=st.sampled_from(["new", "ok", "error", "dead"]),
    errors=st.integers(0, 12),
    hours_since_success=st.one_of(st.none(), st.integers(0, 2 * 30 * 24)),
    interval=st.one_of(st.none(), st.floats(1, 10 * 86400)),
)
def test_within_the_grace_a_robots_5xx_never_changes_health(
    status: str, errors: int, hours_since_success: int | None, interval: float | None
) -> None:
    last = None if hours_since_success is None else NOW - timedelta(hours=hours_since_success)
    state = fine(
        status=status,
        error_count=errors,
        last_success_at=last,
        added_at=NOW - timedelta(days=90),
        interval_seconds=interval,
    )
    d = decide(state, ROBOTS_5XX, NOW, POLICY)
    within = last is not None and NOW - last < GRACE
    if within:
        assert set(d.changes) == {"next_crawl_at", "last_error"}
        assert d.changes["next_crawl_at"] > NOW
    else:
        assert d.changes["error_count"] == errors + 1
