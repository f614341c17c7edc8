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


def test_audit_throttle_wait_is_what_the_site_asked() -> None:
    """An audit waits what the site asked (the feed crawler's 60 s floor made a site saying
    "Retry-After: 2" cost a minute per retry, three per page); a site that names no time gets
    a minute, not a feed's half hour; a day at most."""
    from datetime import UTC, datetime, timedelta
    from email.utils import format_datetime

    from fairfetch.audit.pacing import DEFAULT_THROTTLE_WAIT, throttle_wait

    now = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
    assert throttle_wait("2", now) == 2.0
    assert throttle_wait("0", now) == 0.0
    assert throttle_wait(" 120 ", now) == 120.0
    assert throttle_wait(format_datetime(now + timedelta(seconds=30), usegmt=True), now) == 30.0
    assert throttle_wait(format_datetime(now - timedelta(hours=1), usegmt=True), now) == 0.0
    assert throttle_wait("9" * 40, now) == 24 * 3600.0
    assert DEFAULT_THROTTLE_WAIT == 60.0
    for unreadable in (None, "", "soon", "-5", "1.5"):
        assert throttle_wait(unreadable, now) == DEFAULT_THROTTLE_WAIT, unreadable
