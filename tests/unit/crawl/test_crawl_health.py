"""DESIGN.md's feed-health table, row by row, as a pure function."""

from __future__ import annotations

from dataclasses import fields
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fairfetch.crawl.health import (
    FeedState,
    HealthPolicy,
    Outcome,
    adaptive_interval,
    backoff_delay,
    decide,
)

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
EARLIER = NOW - timedelta(days=3)
POLICY = HealthPolicy()
HEALTH_COLUMNS = {f.name for f in fields(FeedState)} - {"url", "next_crawl_at"}


def healthy() -> FeedState:
    return FeedState(
        url="https://a.example/feed",
        status="ok",
        error_count=0,
        last_error="timeout: old",
        last_success_at=EARLIER,
        last_fetched_at=EARLIER,
        next_crawl_at=NOW,
        interval_seconds=3600.0,
    )


def failing(n: int) -> FeedState:
    s = healthy()
    return FeedState(
        **{**s.__dict__, "status": "error", "error_count": n, "last_error": "http: 500"}
    )


@pytest.mark.parametrize("kind", ["ok", "not_modified"])
def test_success_resets_and_schedules_adaptively(kind: str) -> None:
    d = decide(failing(4), Outcome(kind, http_status=200 if kind == "ok" else 304), NOW, POLICY)
    c = d.changes
    assert d.outcome == kind
    assert c["status"] == "ok"
    assert c["error_count"] == 0
    assert c["last_success_at"] == NOW
    assert c["last_fetched_at"] == NOW
    assert "last_error" not in c  # kept
    delay = (c["next_crawl_at"] - NOW).total_seconds()
    assert POLICY.min_interval * 0.9 <= delay <= POLICY.max_interval * 1.1


@pytest.mark.parametrize(("status", "retry_after"), [(429, 120.0), (503, 86400.0), (429, None)])
def test_throttle_touches_nothing_but_next_crawl_at(status: int, retry_after: float | None) -> None:
    for state in (healthy(), failing(7)):
        d = decide(
            state, Outcome("throttled", http_status=status, retry_after=retry_after), NOW, POLICY
        )
        assert set(d.changes) == {"next_crawl_at"}, "a throttle must not touch a health column"
        expected = retry_after if retry_after is not None else 1800.0
        assert d.changes["next_crawl_at"] == NOW + timedelta(seconds=expected)
        assert d.outcome == "throttled"


def test_a_404_still_counts_against_the_feed() -> None:
    d = decide(
        healthy(),
        Outcome("error", error_kind="http", http_status=404, error_detail="HTTP 404"),
        NOW,
        POLICY,
    )
    assert d.changes["status"] == "error"
    assert d.changes["error_count"] == 1
    assert d.changes["last_error"] == "http: HTTP 404"
    assert d.changes["last_fetched_at"] == NOW
    assert "last_success_at" not in d.changes
    assert d.changes["next_crawl_at"] > NOW


def test_tenth_consecutive_failure_is_dead_and_unscheduled() -> None:
    state = healthy()
    for i in range(1, 11):
        d = decide(state, Outcome("error", error_kind="timeout"), NOW, POLICY)
        state = FeedState(**{**state.__dict__, **d.changes})
        if i < 10:
            assert state.status == "error", i
            assert state.next_crawl_at is not None
    assert state.status == "dead"
    assert state.error_count == 10
    assert state.next_crawl_at is None
    assert state.last_success_at == EARLIER  # unchanged by failures


def test_410_is_dead_at_once() -> None:
    d = decide(healthy(), Outcome("error", error_kind="gone", http_status=410), NOW, POLICY)
    assert d.changes["status"] == "dead"
    assert d.changes["error_count"] == 1
    assert d.changes["last_error"].startswith("gone")
    assert d.changes["next_crawl_at"] is None


def test_dead_feed_is_revived_by_a_success() -> None:
    dead = FeedState(**{**failing(10).__dict__, "status": "dead", "next_crawl_at": None})
    d = decide(dead, Outcome("ok", http_status=200), NOW, POLICY)
    assert d.changes["status"] == "ok"
    assert d.changes["error_count"] == 0


def test_backoff_ladder_grows_is_weighted_and_capped() -> None:
    one = backoff_delay(1, 1.0, POLICY)
    assert backoff_delay(2, 1.0, POLICY) == 2 * one
    assert backoff_delay(3, 3.0, POLICY) == 12 * one  # a DNS failure says more than a timeout
    assert backoff_delay(30, 4.0, POLICY) == POLICY.backoff_cap


def test_dns_failure_waits_longer_than_a_timeout() -> None:
    dns = decide(healthy(), Outcome("error", error_kind="dns"), NOW, POLICY)
    tmo = decide(healthy(), Outcome("error", error_kind="timeout"), NOW, POLICY)
    assert dns.changes["next_crawl_at"] > tmo.changes["next_crawl_at"]


def test_permanent_redirect_moves_only_when_confirmed() -> None:
    target = "https://new.example/feed"
    first = decide(healthy(), Outcome("ok", permanent_target=target), NOW, POLICY)
    assert "url" not in first.changes
    assert first.changes["redirect_candidate"] == target
    state = FeedState(
        **{
            **healthy().__dict__,
            **{k: v for k, v in first.changes.items() if k in HEALTH_COLUMNS | {"next_crawl_at"}},
        }
    )
    second = decide(state, Outcome("ok", permanent_target=target), NOW, POLICY)
    assert second.changes["url"] == target


def test_a_different_target_restarts_confirmation() -> None:
    state = FeedState(
        **{
            **healthy().__dict__,
            "redirect_candidate": "https://x.example/a",
            "redirect_candidate_count": 1,
        }
    )
    d = decide(state, Outcome("ok", permanent_target="https://y.example/b"), NOW, POLICY)
    assert "url" not in d.changes
    assert d.changes["redirect_candidate_count"] == 1


def test_temporary_redirect_never_moves() -> None:
    d = decide(healthy(), Outcome("ok", permanent_target=None), NOW, POLICY)
    assert "url" not in d.changes


def test_new_feed_url_moves_at_once() -> None:
    d = decide(healthy(), Outcome("ok", new_feed_url="https://moved.example/rss"), NOW, POLICY)
    assert d.changes["url"] == "https://moved.example/rss"


def test_adaptive_interval_follows_rate_and_hints_within_bounds() -> None:
    hourly = [NOW - timedelta(hours=i) for i in range(10)]
    assert adaptive_interval(hourly, None, None, POLICY) == 1800.0
    every_minute = [NOW - timedelta(minutes=i) for i in range(10)]
    assert adaptive_interval(every_minute, None, None, POLICY) == POLICY.min_interval
    yearly = [NOW - timedelta(days=365 * i) for i in range(3)]
    assert adaptive_interval(yearly, None, None, POLICY) == POLICY.max_interval
    assert adaptive_interval(hourly, 7200.0, None, POLICY) == 7200.0  # the publisher's hint wins
    assert adaptive_interval([], None, None, POLICY) == POLICY.default_interval


@given(
    status=st.sampled_from(["new", "ok", "error", "dead"]),
    errors=st.integers(0, 12),
    kind=st.sampled_from(["ok", "not_modified", "throttled", "error"]),
    error_kind=st.sampled_from(["dns", "connect", "timeout", "http", "gone", "blocked", "parse"]),
    retry=st.one_of(st.none(), st.floats(60, 86400)),
)
def test_decide_invariants(
    status: str, errors: int, kind: str, error_kind: str, retry: float | None
) -> None:
    state = FeedState(
        url="https://a.example/f",
        status=status,
        error_count=errors,
        last_success_at=EARLIER,
        last_fetched_at=EARLIER,
    )
    d = decide(state, Outcome(kind, error_kind=error_kind, retry_after=retry), NOW, POLICY)
    c = d.changes
    if kind == "throttled":
        assert set(c) == {"next_crawl_at"}
    elif kind in ("ok", "not_modified"):
        assert c["error_count"] == 0
        assert c["status"] == "ok"
    else:
        assert c["error_count"] == errors + 1
        assert "last_success_at" not in c
        assert (c["status"] == "dead") == (
            status == "dead" or error_kind == "gone" or errors + 1 >= 10
        )
        assert (c["next_crawl_at"] is None) == (c["status"] == "dead")
    if c.get("next_crawl_at") is not None:
        assert c["next_crawl_at"] >= NOW


@given(
    url=st.text(min_size=1, max_size=30),
    minutes=st.integers(0, 10**6),
    errors=st.integers(0, 8),
    kind=st.sampled_from(["ok", "not_modified", "error"]),
    error_kind=st.sampled_from(["dns", "timeout", "http", "perimeter"]),
    hint=st.one_of(st.none(), st.floats(1, 10 * 86400)),
    gap_minutes=st.one_of(st.none(), st.integers(1, 10 * 24 * 60)),
)
def test_jitter_stays_inside_the_bounds(
    url: str,
    minutes: int,
    errors: int,
    kind: str,
    error_kind: str,
    hint: float | None,
    gap_minutes: int | None,
) -> None:
    """Jitter spreads feeds inside the bounds, never past them: a healthy feed is read at least
    every ``max_interval`` and never more often than ``min_interval`` or the publisher's own
    hint (a ``<ttl>`` of an hour means "not before an hour"); the failure ladder is capped."""
    now = NOW + timedelta(minutes=minutes)
    times = [now - timedelta(minutes=gap_minutes * i) for i in range(5)] if gap_minutes else []
    state = FeedState(**{**failing(errors).__dict__, "url": url})
    d = decide(
        state,
        Outcome(kind, error_kind=error_kind, hint_seconds=hint, entry_times=times),
        now,
        POLICY,
    )
    delay = (d.changes["next_crawl_at"] - now).total_seconds()
    if kind == "error":
        assert delay <= POLICY.backoff_cap
    else:
        assert POLICY.min_interval <= delay <= POLICY.max_interval
        if hint is not None:
            # (timedelta keeps microseconds: the hint rounded to one)
            assert delay >= min(hint, POLICY.max_interval) - 1e-6
