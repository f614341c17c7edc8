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


def crawl_until(
    state: FeedState, outcome: Outcome, start: datetime, end: datetime
) -> tuple[FeedState, int]:
    """Crawl ``state`` whenever it falls due between ``start`` and ``end``, always answering
    ``outcome``; returns the last state and how many fetches were made."""
    fetches = 0
    at = start
    while at < end:
        state = apply(state, outcome, at)
        fetches += 1
        assert state.next_crawl_at is not None
        assert state.next_crawl_at > at
        at = state.next_crawl_at
    return state, fetches


def test_a_feed_that_stopped_publishing_a_year_ago_is_read_at_the_slowest_rate() -> None:
    """Its last twenty entries came an hour apart, a year ago; nothing since. Half the median
    gap between them said 'every 30 minutes', for ever: 48 fetches a day of an unchanged feed.
    The publishing rate observed up to now is near zero: the interval is the longest."""
    year_old = tuple(NOW - timedelta(days=365, hours=i) for i in range(20))
    state = FeedState(url="https://quiet.example/feed", status="ok", interval_seconds=1800.0)
    state, fetches = crawl_until(state, Outcome("ok", entry_times=year_old), NOW, NOW + MONTH)
    assert state.interval_seconds == POLICY.max_interval
    assert fetches <= 34  # about one a day (jitter ±10 %)


def test_a_feed_that_falls_silent_is_read_less_and_less_often() -> None:
    """Hourly for a day, then nothing: the same body answered 200 for three weeks. Each crawl
    sees the silence grow; the interval must grow with it, never shrink, within its bounds."""
    last_day = tuple(NOW - timedelta(hours=i) for i in range(24))
    state = FeedState(url="https://stopped.example/feed", status="ok", interval_seconds=1800.0)
    outcome = Outcome("ok", entry_times=last_day)
    at, fetches, intervals = NOW, 0, []
    while at < NOW + timedelta(days=21):
        state = apply(state, outcome, at)
        assert state.interval_seconds is not None
        assert state.next_crawl_at is not None
        intervals.append(state.interval_seconds)
        fetches += 1
        at = state.next_crawl_at
    assert intervals[0] == 1800.0  # just after the last entry: the feed's own rhythm
    assert intervals == sorted(intervals), "silence never makes us read more often"
    assert intervals[-1] >= 12 * 3600.0
    assert fetches < 200  # half-hourly for three weeks was 1,008 fetches


def test_a_feed_that_keeps_publishing_keeps_its_rhythm() -> None:
    """The other direction: a feed publishing every hour, read just after each entry, stays at
    half its rhythm; silence is not confused with a regular publisher."""
    state = FeedState(url="https://busy.example/feed", status="ok")
    at = NOW
    for _ in range(200):
        entries = tuple(at - timedelta(minutes=5) - timedelta(hours=i) for i in range(20))
        state = apply(state, Outcome("ok", entry_times=entries), at)
        assert state.interval_seconds == 1800.0
        assert state.next_crawl_at is not None
        at = state.next_crawl_at


def test_entries_dated_in_the_future_or_undated_keep_the_interval_in_bounds() -> None:
    future = tuple(NOW + timedelta(days=400, hours=i) for i in range(20))
    for times in (future, ()):
        state = FeedState(url="https://odd.example/feed", status="ok", interval_seconds=5400.0)
        state, _ = crawl_until(state, Outcome("ok", entry_times=times), NOW, NOW + MONTH)
        assert state.interval_seconds is not None
        assert POLICY.min_interval <= state.interval_seconds <= POLICY.max_interval


@pytest.mark.parametrize(
    "headers_304",
    [{}, {"cache-control": "max-age=300"}, {"cache-control": "public, max-age=0"}],
    ids=["no-cache-control", "max-age-300", "max-age-0"],
)
def test_a_ttl_holds_through_304s(headers_304: dict[str, str]) -> None:
    """``<ttl>120</ttl>`` means "not before two hours" (docs/crawling.md: the jitter never
    schedules a feed sooner than its publisher's hint). A 304 has no body, so the ttl is not in
    it: the jitter went up to 10 % under the two hours, and a 304's own ``max-age=300`` (a CDN
    sends its Cache-Control on both) replaced the ttl, reading the feed every 15 minutes."""
    from fairfetch.crawl.fetch_reading import hint_seconds
    from fairfetch.feeds.model import Feed

    ttl = Feed(ttl_hint=7200.0)
    on_200 = {"cache-control": "max-age=300"}
    state = FeedState(url="https://ttl.example/feed", status="ok")
    full = Outcome("ok", http_status=200, hint_seconds=hint_seconds(ttl, on_200))
    state = apply(state, full, NOW)
    assert state.interval_seconds == 7200.0
    at = state.next_crawl_at
    assert at is not None
    not_modified = Outcome(
        "not_modified", http_status=304, hint_seconds=hint_seconds(Feed(), headers_304)
    )
    for _ in range(300):
        state = apply(state, not_modified, at)
        assert state.next_crawl_at is not None
        assert (state.next_crawl_at - at).total_seconds() >= 7200.0 - 1e-6
        at = state.next_crawl_at
    assert state.interval_seconds == 7200.0


def test_a_silent_feed_answering_304_is_read_less_and_less_often() -> None:
    """The common case of a feed that stopped publishing: its server supports conditional GET,
    so every crawl is a 304 and no entry dates come with it. The interval stayed at the old
    rhythm (every 30 minutes) for ever; the newest entry the store has seen dates the silence,
    and at least the silence spread over a full window of recent entries (20) is the floor."""
    state = FeedState(
        url="https://quiet304.example/feed",
        status="ok",
        interval_seconds=1800.0,
        newest_entry_at=NOW - timedelta(days=365),
    )
    state, fetches = crawl_until(state, Outcome("not_modified", http_status=304), NOW, NOW + MONTH)
    assert state.interval_seconds == POLICY.max_interval
    assert fetches <= 34  # about one a day (jitter ±10 %), not 1,440


def test_a_304_just_after_an_entry_keeps_the_rhythm() -> None:
    for newest in (NOW - timedelta(minutes=10), NOW + timedelta(days=30), None):
        state = FeedState(
            url="https://busy304.example/feed",
            status="ok",
            interval_seconds=1800.0,
            newest_entry_at=newest,
        )
        d = decide(state, Outcome("not_modified", http_status=304), NOW, POLICY)
        assert d.changes["interval_seconds"] == 1800.0, newest
