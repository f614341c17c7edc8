"""Bad input to the testbed's pure parts: each is refused with an error naming it, and never
leaves the simulated web in a state where it can no longer serve."""

from __future__ import annotations

import math

import pytest

from fairfetch.testbed.catalog import FeedSpec, select
from fairfetch.testbed.clock import TestbedClock


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
