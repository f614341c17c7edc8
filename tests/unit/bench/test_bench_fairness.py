"""The benchmarks' own bookkeeping: what makes a ratio untrustworthy must show in their output.

Pure helpers only (no servers, no timing): the accounting of failures, politeness, deliveries,
and the peers' resolver that keeps their traffic on loopback.
"""

from __future__ import annotations

import socket
from typing import Any

import pytest

import _loopback
import crawl
import notify


def _ours(**over: float) -> dict[str, float]:
    r = {"full_s": 1.0, "slowest_full_s": 1.0, "peak_rss_mb": 90.0, "entries": 100.0,
         "failed": 0.0, "failed_304": 0.0, "requests": 20.0, "conditional_s": 0.1,
         "cpu_304_s": 0.1, "cpu_full_s": 1.0, "answered_304": 10.0, "warm_full_s": 0.5,
         "cpu_warm_full_s": 0.5, "cold_304_s": 0.2, "cpu_cold_304_s": 0.2}
    r.update(over)
    return r


def _peer(**over: float) -> dict[str, float]:
    r = {"full_s": 4.0, "slowest_full_s": 4.0, "peak_rss_mb": 50.0, "entries": 100.0,
         "failed": 0.0}
    r.update(over)
    return r


SEEN = {"requests": 10, "http_errors": 0, "violations": 0}


def test_bench_loopback_refuses_names_off_loopback(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[Any] = []

    def recorder(host: Any, *args: Any, **kwargs: Any) -> list[Any]:
        asked.append(host)
        return []

    monkeypatch.setattr(socket, "getaddrinfo", recorder)
    _loopback.patch_resolver()
    socket.getaddrinfo("blog1.test", 80)
    socket.getaddrinfo("127.0.0.1", 80)
    for name in ("example.com", "blog1.test.example.com", "10.0.0.1"):
        with pytest.raises(socket.gaierror):
            socket.getaddrinfo(name, 80)
    assert asked == ["127.0.0.1", "127.0.0.1"]


def test_bench_crawl_seen_counts_a_host_with_two_in_flight() -> None:
    stats = {
        "total": {"requests": 3, "statuses": {"200": 2, "404": 1}},
        "domains": {"a.test": {"max_in_flight": 2}},
        "hosts": {"a.test": {"max_in_flight": 2}},
    }
    assert crawl._seen(stats) == {"requests": 3, "http_errors": 1, "violations": 1}


def test_bench_crawl_failed_peer_gets_no_ratio(capsys: pytest.CaptureFixture[str]) -> None:
    results = {"fairfetch": _ours(), "requests+feedparser": _peer()}
    seen = dict.fromkeys(crawl.CONTENDERS, SEEN)
    problems = crawl._report(10, 0.0, 1, results, seen, {"reader": "exit 1: ImportError"})
    out = capsys.readouterr().out
    assert "reader                 FAILED: exit 1: ImportError" in out
    assert "ratio fairfetch / reader: none (reader failed)" in out
    assert "ratio fairfetch / requests+feedparser: 4.0x\n" in out
    assert problems == ["reader failed"]


def test_bench_crawl_peer_reading_fewer_entries_is_flagged(
    capsys: pytest.CaptureFixture[str],
) -> None:
    results = {"fairfetch": _ours(), "reader": _peer(),
               "requests+feedparser": _peer(entries=95.0, failed=1.0)}
    seen = dict.fromkeys(crawl.CONTENDERS, SEEN)
    problems = crawl._report(10, 0.0, 1, results, seen, {})
    out = capsys.readouterr().out
    assert "ratio fairfetch / requests+feedparser: 4.0x (over unequal work" in out
    assert "ratio fairfetch / reader: 4.0x\n" in out
    assert problems == ["requests+feedparser: 1 of 10 feeds not read",
                        "requests+feedparser: 95 entries stored/parsed, fairfetch 100"]


def test_bench_crawl_304_pass_that_was_not_all_304_is_flagged(
    capsys: pytest.CaptureFixture[str],
) -> None:
    results = {"fairfetch": _ours(answered_304=7.0), "reader": _peer(),
               "requests+feedparser": _peer()}
    problems = crawl._report(10, 0.0, 1, results, dict.fromkeys(crawl.CONTENDERS, SEEN), {})
    out = capsys.readouterr().out
    assert "costs 0.20 of the CPU" in out  # 0.1 s of 304s against 0.5 s of warm full fetches
    assert problems == ["fairfetch: the 304 pass got 7 answers 304 of 10: it is not all the "
                        "304 path"]


def test_bench_notify_judge_counts_against_the_testbed_items() -> None:
    truth = [(0, "Alpha beta"), (1, "Gamma"), (1, "Delta")]
    mails = [
        ("reader0@x.test", "[Blog] Alpha beta", "<1>"),
        ("reader0@x.test", "[Blog] Alpha beta", "<1>"),  # the same item again
        ("reader1@x.test", "[Blog] Gamma", "<2>"),
        ("reader1@x.test", "[Blog] Epsilon", "<3>"),  # no such new item
        ("reader0@x.test", "[Blog] Gamma", "<4>"),  # an item of another reader's feed
    ]
    assert notify._judge(mails, truth, "@x.test") == {
        "delivered": 2, "duplicates": 1, "misses": 1, "strays": 2,
    }
    assert notify._judge([], truth, "@x.test")["misses"] == 3
