"""/crawlstats' "last hour" and "last day" hold exactly the crawls of the last hour and day,
the same rows ``fairfetch stats`` counts: a failure just inside a window is never left out,
one just outside never counted, whatever second of the minute the page is viewed at."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from fairfetch.config import Settings
from fairfetch.store import SqlStore
from fairfetch.web.stats import MinuteCache, crawlstats

from .conftest import add_crawled, record_crawl


def test_web_crawlstats_windows_match_the_store_to_the_second(store: SqlStore) -> None:
    now = datetime.now(UTC).replace(second=30, microsecond=0)
    fid = add_crawled(store, "http://a.test/feed", at=now - timedelta(hours=3))
    inside_hour = now - timedelta(minutes=59, seconds=50)
    record_crawl(store, fid, at=inside_hour, outcome="error", error_kind="dns", nbytes=7)
    record_crawl(store, fid, at=now - timedelta(hours=1, seconds=10), outcome="throttled")
    record_crawl(store, fid, at=now - timedelta(hours=23, minutes=59, seconds=50), outcome="ok")
    record_crawl(
        store,
        fid,
        at=now - timedelta(days=1, seconds=20),
        outcome="error",
        error_kind="http",
        nbytes=1000,
    )
    settings = Settings(db=store.url)
    cache = MinuteCache()
    for view in (crawlstats(store, settings, cache, now), crawlstats(store, settings, cache, now)):
        cli = store.stats(now, dead_probe_interval=settings.dead_probe_interval)
        assert view["last_hour"]["crawls"] == {"error:dns": 1}
        assert view["last_hour"]["crawls"] == cli["crawls"]["last_hour"]
        assert view["last_day"]["crawls"] == {"ok": 2, "error:dns": 1, "throttled": 1}
        assert view["last_day"]["crawls"] == cli["crawls"]["last_day"]
        assert view["last_hour"]["bytes"] == cli["bytes"]["last_hour"] == 7
        assert view["last_day"]["bytes"] == cli["bytes"]["last_day"]
        assert view["last_day"]["throttles_by_key"] == [{"key": "example.test", "throttles": 1}]
        assert view["last_hour"]["throttles_by_key"] == []
