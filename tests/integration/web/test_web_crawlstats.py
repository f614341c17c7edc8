"""/crawlstats and /metrics read what the crawler wrote, per window, per key."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from fairfetch.config import Settings
from fairfetch.store import SqlStore
from fairfetch.web.stats import MinuteCache, crawlstats

from .conftest import add_crawled, record_crawl


def test_web_crawlstats_counts_outcomes_per_window_and_throttles_per_key(store) -> None:
    now = datetime.now(UTC).replace(second=30, microsecond=0)
    fid = add_crawled(store, "http://a.letterbox.test/feed", at=now - timedelta(minutes=1))
    record_crawl(
        store, fid, at=now - timedelta(minutes=2), outcome="throttled", key="letterbox.test"
    )
    record_crawl(
        store, fid, at=now - timedelta(minutes=3), outcome="throttled", key="letterbox.test"
    )
    record_crawl(store, fid, at=now - timedelta(hours=3), outcome="throttled", key="other.test")
    record_crawl(store, fid, at=now - timedelta(hours=2), outcome="error", error_kind="dns")
    record_crawl(store, fid, at=now - timedelta(minutes=5), outcome="not_modified", nbytes=10)
    record_crawl(store, fid, at=now - timedelta(days=2), outcome="ok")  # outside both windows
    stats = crawlstats(store, Settings(db=store.url), MinuteCache(), now)
    assert stats["last_hour"]["crawls"] == {"ok": 1, "throttled": 2, "not_modified": 1}
    assert stats["last_day"]["crawls"] == {
        "ok": 1,
        "throttled": 3,
        "not_modified": 1,
        "error:dns": 1,
    }
    assert stats["last_hour"]["throttles_by_key"] == [{"key": "letterbox.test", "throttles": 2}]
    assert stats["last_day"]["throttles_by_key"] == [
        {"key": "letterbox.test", "throttles": 2},
        {"key": "other.test", "throttles": 1},
    ]
    assert stats["last_hour"]["bytes"] == 1234 + 10
    per_minute = {m["minute"]: m["counts"] for m in stats["per_minute"]}
    assert per_minute[(now - timedelta(minutes=2)).replace(second=0)] == {"throttled": 1}
    assert len(stats["per_minute"]) == 60


def test_web_crawlstats_cache_sees_new_crawls_and_drops_old_minutes(store) -> None:
    now = datetime.now(UTC).replace(second=0, microsecond=0)
    fid = add_crawled(store, "http://a.test/feed", at=now - timedelta(minutes=30))
    cache = MinuteCache()
    settings = Settings(db=store.url)
    assert crawlstats(store, settings, cache, now)["last_hour"]["crawls"] == {"ok": 1}
    record_crawl(store, fid, at=now - timedelta(seconds=20), outcome="error", error_kind="http")
    later = crawlstats(store, settings, cache, now + timedelta(seconds=10))
    assert later["last_hour"]["crawls"] == {"ok": 1, "error:http": 1}
    next_day = crawlstats(store, settings, cache, now + timedelta(days=1, minutes=1))
    assert next_day["last_day"]["total"] == 0


def test_web_crawlstats_queue_and_troubled_feeds(store) -> None:
    now = datetime.now(UTC)
    add_crawled(store, "http://due.test/feed", at=now - timedelta(hours=2))  # due 1 h ago
    add_crawled(store, "http://soon.test/feed", at=now - timedelta(minutes=10))  # due in 50 min
    add_crawled(
        store,
        "http://dead.test/feed",
        status="dead",
        error_count=10,
        last_error="gone: 410",
        outcome="error",
        error_kind="gone",
        next_crawl_at=None,
    )
    stats = crawlstats(store, Settings(db=store.url), MinuteCache(), now)
    assert stats["queue"]["due"] == 1
    assert stats["queue"]["next_hour"] == 1
    assert stats["queue"]["oldest_due_at"] is not None
    assert [f["url"] for f in stats["troubled_feeds"]] == ["http://dead.test/feed"]
    assert stats["feeds"]["by_status"] == {"ok": 2, "dead": 1}


def test_web_crawlstats_page_has_the_chart(client, store: SqlStore) -> None:
    now = datetime.now(UTC)
    fid = add_crawled(store, "http://a.test/feed", at=now - timedelta(minutes=1))
    record_crawl(store, fid, at=now - timedelta(minutes=1), outcome="throttled", key="lb.test")
    t = client.get("/crawlstats").text
    assert '<svg id="crawl-chart"' in t
    assert len(re.findall(r'class="bar bar-ok"', t)) == 1
    assert len(re.findall(r'class="bar bar-throttled"', t)) == 1
    assert "lb.test" in t
    assert 'id="queue-due"' in t
    assert '<section class="websub" id="websub">' in t  # the WebSub job's ping counters
    assert "<td>received</td>" in t


def test_web_metrics_count_crawls_recorded_after_start(client, store: SqlStore) -> None:
    before = client.get("/metrics").text
    assert "fairfetch_crawls_total{" not in before
    now = datetime.now(UTC)
    fid = add_crawled(store, "http://a.test/feed", at=now)
    record_crawl(store, fid, at=now, outcome="throttled")
    record_crawl(store, fid, at=now, outcome="error", error_kind="timeout")
    text = client.get("/metrics").text
    assert 'fairfetch_crawls_total{error_kind="",outcome="ok"} 1.0' in text
    assert 'fairfetch_crawls_total{error_kind="timeout",outcome="error"} 1.0' in text
    assert "fairfetch_fetch_duration_seconds_count 3.0" in text
    assert "fairfetch_queue_depth 0.0" in text
    again = client.get("/metrics").text  # nothing new: nothing counted twice
    assert 'fairfetch_crawls_total{error_kind="",outcome="ok"} 1.0' in again
