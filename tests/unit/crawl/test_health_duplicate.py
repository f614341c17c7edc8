"""A confirmed move onto a URL another feed already has (kind ``duplicate``): dead at once,
like a 410, so the one URL is not fetched twice a round; probed monthly like any dead feed."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from fairfetch.crawl.health import FeedState, HealthPolicy, Outcome, decide

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
POLICY = HealthPolicy()
DUPLICATE = Outcome(
    "error",
    error_kind="duplicate",
    error_detail="moved permanently to https://b.example/feed, which feed #7 already crawls",
    http_status=200,
)


@pytest.mark.parametrize("errors", [0, 3])
def test_a_duplicate_is_dead_at_once_and_says_which_feed_it_duplicates(errors: int) -> None:
    state = FeedState(
        url="https://a.example/feed",
        status="ok",
        error_count=errors,
        last_success_at=NOW - timedelta(hours=1),
        next_crawl_at=NOW,
        redirect_candidate="https://b.example/feed",
        redirect_candidate_count=1,
    )
    d = decide(state, DUPLICATE, NOW, POLICY)
    assert d.outcome == "error"
    assert d.changes["status"] == "dead"
    assert d.changes["next_crawl_at"] is None
    assert d.changes["error_count"] == errors + 1
    assert d.changes["last_fetched_at"] == NOW
    assert d.changes["last_error"] == "duplicate: " + DUPLICATE.error_detail
    assert "url" not in d.changes  # it keeps its own URL: lookups by it still find it
    assert "last_success_at" not in d.changes
