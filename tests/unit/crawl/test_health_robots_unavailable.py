"""A robots.txt unreachable for longer than the grace (RFC 9309 §2.3.1.4, last sentence).

"If the robots.txt is undefined for a reasonably long period of time (for example, 30 days),
crawlers MAY assume the robots.txt is unavailable" — i.e. read as if there were none (§2.3.1.3).
Before: past the 30 days the feed was still never read, and each attempt counted as a failure,
so a healthy feed behind a broken robots.txt ended ``dead``. Now: past the grace the crawler
reads the feed as if robots.txt were absent, and says so in ``last_error`` (``feeds show``);
the feed stays in that regime, without a new month of deferral, until robots.txt answers again.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from fairfetch.crawl.health import (
    ROBOTS_ABSENT_MARK,
    FeedState,
    HealthPolicy,
    Outcome,
    decide,
    robots_assumed_unavailable,
)

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
POLICY = HealthPolicy()
GRACE = timedelta(seconds=POLICY.robots_grace)
DEFERRED = "robots_unreachable: robots.txt answered 500; disallowing for now"


def behind_broken_robots(days: float, **kw: object) -> FeedState:
    """A feed last read ``days`` ago, deferred since because robots.txt answers 5xx."""
    last = NOW - timedelta(days=days)
    base = FeedState(
        url="https://a.example/feed",
        status="ok",
        error_count=0,
        last_error=DEFERRED,
        last_success_at=last,
        last_fetched_at=last,
        next_crawl_at=NOW,
        interval_seconds=3600.0,
        added_at=last - timedelta(days=100),
    )
    return replace(base, **kw)  # type: ignore[arg-type]


def test_within_the_grace_robots_txt_is_not_assumed_absent() -> None:
    assert not robots_assumed_unavailable(behind_broken_robots(29.9), NOW, POLICY)


def test_past_the_grace_robots_txt_is_assumed_absent() -> None:
    assert robots_assumed_unavailable(behind_broken_robots(30.1), NOW, POLICY)


def test_one_robots_5xx_after_a_month_of_other_failures_is_not_a_month_unreachable() -> None:
    # A dead feed probed monthly: its last attempt failed for its own reason (404), robots.txt
    # answered then (else it would say robots_unreachable). One 5xx today is not 30 days.
    dead = behind_broken_robots(90, status="dead", error_count=10, last_error="http: HTTP 404")
    assert not robots_assumed_unavailable(dead, NOW, POLICY)


def test_a_feed_never_read_counts_its_grace_from_its_addition() -> None:
    new = behind_broken_robots(0, last_success_at=None, last_fetched_at=None, status="new")
    recent = replace(new, added_at=NOW - timedelta(days=3))
    assert not robots_assumed_unavailable(recent, NOW, POLICY)
    assert robots_assumed_unavailable(replace(new, added_at=NOW - GRACE), NOW, POLICY)


def test_a_read_as_if_absent_says_so_and_is_a_success() -> None:
    state = behind_broken_robots(31)
    d = decide(state, Outcome("ok", http_status=200, robots_absent=True), NOW, POLICY)
    assert d.outcome == "ok"
    assert d.changes["status"] == "ok"
    assert d.changes["error_count"] == 0
    assert d.changes["last_success_at"] == NOW
    assert d.changes["last_fetched_at"] == NOW
    note = d.changes["last_error"]
    assert note.startswith("robots_unavailable: ")
    assert ROBOTS_ABSENT_MARK in note
    assert "RFC 9309" in note


def test_the_regime_lasts_without_a_new_month_of_deferral() -> None:
    # The read just now reset last_success_at; robots.txt still answers 5xx next time: the
    # feed is read again at once, not deferred for another 30 days.
    state = behind_broken_robots(31)
    d = decide(state, Outcome("ok", http_status=200, robots_absent=True), NOW, POLICY)
    after = replace(state, **d.changes)
    later = NOW + timedelta(hours=1)
    assert robots_assumed_unavailable(after, later, POLICY)


def test_a_failure_of_the_feed_itself_in_the_regime_counts_and_keeps_the_regime() -> None:
    state = behind_broken_robots(0.1, last_error="robots_unavailable: " + ROBOTS_ABSENT_MARK)
    d = decide(
        state, Outcome("error", error_kind="http", http_status=404, robots_absent=True), NOW, POLICY
    )
    assert d.changes["status"] == "error"
    assert d.changes["error_count"] == 1
    assert d.changes["last_error"].startswith("http: HTTP 404")
    assert ROBOTS_ABSENT_MARK in d.changes["last_error"]
    assert robots_assumed_unavailable(replace(state, **d.changes), NOW, POLICY)


def test_robots_txt_answering_again_ends_the_regime_and_its_note() -> None:
    state = behind_broken_robots(0.1, last_error="robots_unavailable: " + ROBOTS_ABSENT_MARK)
    d = decide(state, Outcome("ok", http_status=200), NOW, POLICY)
    assert d.changes["last_error"] is None
    assert not robots_assumed_unavailable(replace(state, **d.changes), NOW, POLICY)
    # ... and an ordinary error note is kept by a success, as DESIGN.md's table says.
    plain = decide(replace(state, last_error="timeout: slow"), Outcome("ok"), NOW, POLICY)
    assert "last_error" not in plain.changes


@given(
    days=st.floats(0, 29.99),
    status=st.sampled_from(["new", "ok", "error", "dead"]),
    errors=st.integers(0, 12),
)
def test_within_the_grace_no_health_column_moves(days: float, status: str, errors: int) -> None:
    # The negative: before the month is up, robots.txt is not assumed absent, and the
    # robots_unreachable outcome moves next_crawl_at and last_error only.
    state = behind_broken_robots(days, status=status, error_count=errors)
    assert not robots_assumed_unavailable(state, NOW, POLICY)
    d = decide(state, Outcome("error", error_kind="robots_unreachable"), NOW, POLICY)
    assert set(d.changes) == {"next_crawl_at", "last_error"}
