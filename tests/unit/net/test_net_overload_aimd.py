"""DESIGN.md, Politeness: "On 429/503 from a key, its rate halves and recovers additively".
A 503 without Retry-After is a failure of the feed (health counts it), but it is also the
server saying it is overloaded: the rate towards it must come down as for a 429. Before, only
429 and 503 + Retry-After cut it, so a backend answering bare 503s was asked at full speed,
every request one more 503."""

from __future__ import annotations

from typing import Any

from fairfetch.net.outcome import FetchResult
from fairfetch.net.politeness import Feedback, PolitenessState


def _result(status: int, headers: dict[str, str] | None = None, **kw: Any) -> FetchResult:
    return FetchResult(
        url="http://a.test/", final_url="http://a.test/", status=status, headers=headers or {}, **kw
    )


def test_a_bare_503_is_feedback_that_slows_the_key_but_no_throttle() -> None:
    fb = Feedback.from_result(_result(503, error_kind="http", error_detail="503"))
    assert fb.overloaded
    assert not fb.throttled
    assert fb.retry_after is None
    for ok in (_result(200), _result(404, error_kind="http"), _result(500, error_kind="http")):
        assert not Feedback.from_result(ok).overloaded
    throttle = Feedback.from_result(_result(503, {"retry-after": "120"}, retry_after=120.0))
    assert throttle.throttled
    assert not throttle.overloaded


def test_repeated_bare_503s_halve_the_rate_down_to_its_floor() -> None:
    s: PolitenessState[int] = PolitenessState(per_key_in_flight=1, throttle_rate=1.0)
    for i in range(40):
        s.push("k", "h.test", i)
    t = 0.0
    rates = []
    for _ in range(12):
        slot = s.pop_ready(t)
        assert slot is not None
        s.finish(slot, Feedback(overloaded=True), t)
        rates.append(s.snapshot()["k"].rate)
        t = s.startable_at("k")
    assert rates[0] == 1.0
    assert rates[1] == 0.5
    assert rates[-1] == s.min_rate  # bounded below, however many
    assert s.snapshot()["k"].throttles == 0  # not counted as throttles (no Retry-After)
    assert s.snapshot()["k"].paused_until is None


def test_an_ordinary_failure_does_not_slow_the_key() -> None:
    s: PolitenessState[int] = PolitenessState(per_key_in_flight=1)
    s.push("k", "h.test", 1)
    slot = s.pop_ready(0.0)
    assert slot is not None
    s.finish(slot, Feedback.from_result(_result(500, error_kind="http")), 0.0)
    assert s.snapshot()["k"].rate is None
