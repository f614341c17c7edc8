"""Bad input to the testbed's pure parts: each is refused with an error naming it, and never
leaves the simulated web in a state where it can no longer serve."""

from __future__ import annotations

import math

import pytest

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
