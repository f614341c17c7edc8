"""The testbed's pure parts: clock, token bucket, counters, catalogue, entry schedule, payloads."""

from __future__ import annotations

import gzip
import zlib

import pytest

from fairfetch.testbed.catalog import EDGE_BEHAVIOURS, build_sites, select
from fairfetch.testbed.clock import TestbedClock
from fairfetch.testbed.options import TestbedOptions
from fairfetch.testbed.payloads import BOMB_PREFIX, gzip_bomb, huge_chunks, mis_encoded
from fairfetch.testbed.ratelimit import TokenBucket
from fairfetch.testbed.render import entries_at, entry_count, render_feed
from fairfetch.testbed.stats import Stats, registrable_domain


class FakeMonotonic:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_clock_is_frozen_unless_realtime_and_only_moves_forward() -> None:
    mono = FakeMonotonic()
    frozen = TestbedClock(1000.0, monotonic=mono)
    ticking = TestbedClock(1000.0, realtime=True, monotonic=mono)
    mono.t += 5
    assert frozen.now() == 1000.0
    assert ticking.now() == 1005.0
    assert frozen.advance(60) == 1060.0
    assert frozen.set(2000.0) == 2000.0
    with pytest.raises(ValueError):
        frozen.advance(-1)
    with pytest.raises(ValueError):
        frozen.set(1999.0)


def test_default_start_is_a_utc_midnight() -> None:
    assert TestbedClock().start % 86400 == 0


def test_token_bucket_spends_burst_then_refills_at_rate() -> None:
    mono = FakeMonotonic()
    bucket = TokenBucket(rate=2.0, burst=3, clock=mono)
    assert [bucket.take() for _ in range(4)] == [True, True, True, False]
    mono.t += 0.5  # one token at 2/s
    assert bucket.take() is True
    assert bucket.take() is False
    mono.t += 100  # never more than the burst
    assert sum(bucket.take() for _ in range(10)) == 3
    bucket.refill()
    assert sum(bucket.take() for _ in range(10)) == 3


def test_token_bucket_with_zero_rate_never_refills() -> None:
    mono = FakeMonotonic()
    bucket = TokenBucket(rate=0.0, burst=1, clock=mono)
    assert bucket.take()
    mono.t += 1e6
    assert not bucket.take()


def test_stats_count_in_flight_per_host_domain_and_platform() -> None:
    stats = Stats()
    a = stats.begin("a.letterbox.test", "letterbox", conditional=False)
    b = stats.begin("b.letterbox.test", "letterbox", conditional=True)
    c = stats.begin("x-news.test", "letterbox", conditional=False)
    snap = stats.snapshot()
    assert snap["platforms"]["letterbox"]["in_flight"] == 3
    assert snap["domains"]["letterbox.test"]["max_in_flight"] == 2
    assert snap["domains"]["x-news.test"]["max_in_flight"] == 1
    assert snap["hosts"]["a.letterbox.test"]["max_in_flight"] == 1
    stats.end(a, 429)
    stats.end(b, 304)
    snap = stats.snapshot()
    assert snap["platforms"]["letterbox"] == {
        "requests": 3, "in_flight": 1, "max_in_flight": 3, "throttled": 1,
        "conditional_requests": 1, "conditional_hits": 1, "statuses": {"304": 1, "429": 1},
    }
    # A reset keeps what is still in flight, and that request's end still lands.
    stats.reset()
    snap = stats.snapshot()
    assert snap["platforms"]["letterbox"]["requests"] == 0
    assert snap["platforms"]["letterbox"]["in_flight"] == 1
    assert "a.letterbox.test" not in snap["hosts"]
    stats.end(c, None)  # abandoned by the client: no status
    snap = stats.snapshot()
    assert snap["total"]["in_flight"] == 0
    assert snap["platforms"]["letterbox"]["statuses"] == {}


def test_registrable_domain_groups_shared_hosts() -> None:
    assert registrable_domain("blog10.blogs.test") == "blogs.test"
    assert registrable_domain("www.blog11.test") == "blog11.test"
    assert registrable_domain("a.letterbox.test") == "letterbox.test"


def test_catalogue_is_deterministic_large_and_loopback_named() -> None:
    opts = TestbedOptions()
    sites = build_sites(7, opts)
    assert sites == build_sites(7, opts)
    assert list(sites) != list(build_sites(8, opts))
    assert len(sites) >= 2000
    assert all(host.endswith(".test") for host in sites)
    letterbox = [s for s in sites.values() if s.platform == "letterbox"]
    on_platform = [s for s in letterbox if s.host.endswith(".letterbox.test")]
    custom = {registrable_domain(s.host) for s in letterbox} - {"letterbox.test"}
    assert len(on_platform) >= 200
    assert len(custom) == 20
    assert {s.kind for s in letterbox} == {"newsletter"}
    formats = {s.format for s in sites.values() if s.kind == "blog"}
    assert {"rss20", "atom10"} <= formats
    shared = [s for s in sites.values() if s.host.endswith(".blogs.test")]
    assert len(shared) == opts.blogs // 10
    behaviours = {s.behaviour for s in sites.values()}
    assert set(EDGE_BEHAVIOURS) <= behaviours
    assert "podcast-empty" in behaviours


def test_select_filters_by_behaviour_and_prefix() -> None:
    sites = build_sites(1, TestbedOptions(blogs=5, letterbox=3, letterbox_custom=1, podcasts=2))
    specs = [s.spec(f"http://{s.host}:1") for s in sites.values()]
    redirects = select(specs, behaviours=["redirect-*"])
    assert redirects
    assert all(s.behaviour.startswith("redirect-") for s in redirects)
    assert len(select(specs, n=4)) == 4
    assert [s.behaviour for s in select(specs, behaviours=["podcast-empty"])] == ["podcast-empty"]


def test_entry_schedule_starts_with_backlog_and_gains_one_per_period() -> None:
    site = next(iter(build_sites(1, TestbedOptions(blogs=1)).values()))
    start = 1_767_225_600.0
    n0 = entry_count(site, start, start)
    assert n0 == 20
    assert entry_count(site, start, start + site.period) == n0 + 1
    assert entry_count(site, start, start + site.period * 3) == n0 + 3
    assert entry_count(site, start, start - 30 * site.period) == 0
    entries = entries_at(1, site, start, n0 + 1, 10)
    assert len(entries) == 10
    assert entries[0].index == n0
    assert entries[0].published <= start + site.period
    assert [e.published for e in entries] == sorted((e.published for e in entries), reverse=True)
    # Same entry, same words, whenever it is rendered.
    assert entries_at(1, site, start, n0 + 5, 10)[4] == entries[0]


def test_rendered_feed_changes_etag_only_when_an_entry_is_added() -> None:
    site = next(iter(build_sites(1, TestbedOptions(blogs=1)).values()))
    start = 1_767_225_600.0
    a = render_feed(site, "http://h:1", "/feed.xml", entries_at(1, site, start, 20, 10))
    b = render_feed(site, "http://h:1", "/feed.xml", entries_at(1, site, start, 20, 10))
    c = render_feed(site, "http://h:1", "/feed.xml", entries_at(1, site, start, 21, 10))
    assert a == b
    assert c.etag != a.etag
    assert c.last_modified is not None
    assert a.last_modified is not None
    assert c.last_modified > a.last_modified


def test_gzip_bomb_inflates_exactly_to_its_size() -> None:
    size = 3 * (1 << 20) + 17
    bomb = gzip_bomb(size)
    data = gzip.decompress(bomb)  # also checks the CRC and length trailer
    assert len(data) == size
    assert data.startswith(BOMB_PREFIX)
    assert data[len(BOMB_PREFIX):].strip() == b""


def test_default_gzip_bomb_is_about_a_thousandth_of_a_gigabyte() -> None:
    bomb = gzip_bomb(1 << 30)
    assert len(bomb) < 2 * (1 << 20)
    inflater = zlib.decompressobj(31)
    first = inflater.decompress(bomb[:4096], 1 << 20)
    assert first.startswith(BOMB_PREFIX)


def test_mis_encoded_declares_utf8_but_is_windows_1252() -> None:
    body = mis_encoded("http://x.test:1")
    assert b'encoding="utf-8"' in body
    with pytest.raises(UnicodeDecodeError):
        body.decode("utf-8")
    assert "“Crème”" in body.decode("windows-1252")


def test_huge_body_is_over_ten_megabytes() -> None:
    head, item, tail, repeats, length = huge_chunks("http://x.test:1", 11 * 1024 * 1024)
    assert length == len(head) + len(item) * repeats + len(tail)
    assert length > 10 * 1024 * 1024
