"""Bad input to the testbed's pure parts: each is refused with an error naming it, and never
leaves the simulated web in a state where it can no longer serve."""

from __future__ import annotations

import math
from typing import Any

import pytest

from fairfetch.testbed.catalog import FeedSpec, select
from fairfetch.testbed.clock import TestbedClock
from fairfetch.testbed.options import TestbedOptions
from fairfetch.testbed.stats import Stats, registrable_domain


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_clock_refuses_a_time_that_is_not_a_number_and_keeps_its_time(bad: float) -> None:
    clock = TestbedClock(1000.0)
    with pytest.raises(ValueError, match="finite"):
        clock.advance(bad)
    with pytest.raises(ValueError, match="finite"):
        clock.set(bad)
    assert clock.now() == 1000.0
    assert clock.advance(5) == 1005.0


def test_select_keeps_exactly_the_first_n_and_zero_is_none() -> None:
    specs = [
        FeedSpec(url=f"http://b{i}.test/feed", behaviour="blog", kind="blog", host=f"b{i}.test")
        for i in range(3)
    ]
    assert select(specs, 0) == []
    assert select(specs, 2) == specs[:2]
    assert select(specs, 0, ["blog"]) == []
    with pytest.raises(ValueError, match="-1"):
        select(specs, -1)


@pytest.mark.parametrize("ip", ["127.0.0.2", "10.0.0.2", "192.168.1.10", "[::1]", "::1"])
def test_an_ip_host_is_its_own_domain(ip: str) -> None:
    assert registrable_domain(ip) == ip


def test_ip_hosts_are_not_merged_into_one_domain_in_the_stats() -> None:
    stats = Stats()
    for host in ("127.0.0.2", "10.0.0.2", "blog1.test"):
        stats.end(stats.begin(host, None, conditional=False), 200)
    domains = stats.snapshot()["domains"]
    assert sorted(domains) == ["10.0.0.2", "127.0.0.2", "blog1.test"]
    assert all(d["requests"] == 1 for d in domains.values())


@pytest.mark.parametrize(
    "option", ["latency", "drip_interval", "letterbox_rate", "growing_period"]
)
@pytest.mark.parametrize("bad", [math.nan, math.inf, -1.0])
def test_options_refuse_a_number_of_seconds_or_rate_that_is_not_one(
    option: str, bad: float
) -> None:
    values: dict[str, Any] = {option: bad}
    with pytest.raises(ValueError, match=option):
        TestbedOptions(**values)
    values[option] = 0.5
    assert getattr(TestbedOptions(**values), option) == 0.5
