"""Pacing with an injected clock: gaps between starts, and a site-wide pause on throttles."""

from __future__ import annotations

from fairfetch.audit.pacing import Pacer


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_audit_pacer_spaces_starts_by_the_gap() -> None:
    clock = Clock()
    p = Pacer(2.0, clock=clock)
    assert [p.reserve(), p.reserve(), p.reserve()] == [0.0, 2.0, 4.0]
    clock.now = 110.0  # idle for a while: no debt is carried over
    assert p.reserve() == 0.0


def test_audit_pacer_zero_gap_never_waits() -> None:
    p = Pacer(0.0, clock=Clock())
    assert {p.reserve() for _ in range(50)} == {0.0}


def test_audit_pacer_pause_holds_every_worker() -> None:
    clock = Clock()
    p = Pacer(0.0, clock=clock)
    p.pause(30.0)
    assert p.reserve() == 30.0
    assert p.reserve() == 30.0  # a second worker waits too, not only the throttled one
    p.pause(5.0)  # a shorter pause does not shorten the longer one
    assert p.reserve() == 30.0


async def test_audit_pacer_wait_sleeps_what_reserve_says() -> None:
    slept: list[float] = []

    async def sleep(s: float) -> None:
        slept.append(s)

    p = Pacer(1.5, clock=Clock(), sleep=sleep)
    await p.wait()
    await p.wait()
    assert slept == [1.5]
