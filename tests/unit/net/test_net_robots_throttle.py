"""A throttled robots.txt is a throttle of the request, not a robots refusal.

The platform storm showed why: every newsletter host's robots.txt was answered with a 429, the
cache read that as "disallow for now", and the feeds were recorded as failures of kind `robots`
— a rate limit counted against healthy feeds."""

from __future__ import annotations

from fairfetch.net.outcome import FetchResult
from fairfetch.net.robots import RobotsCache


def _result(status: int, headers: dict[str, str], retry_after: float | None) -> FetchResult:
    url = "http://a.example/robots.txt"
    return FetchResult(
        url=url, final_url=url, status=status, headers=headers, retry_after=retry_after
    )


def test_429_on_robots_is_a_throttle_until_retry_after() -> None:
    cache = RobotsCache()
    rules = cache.interpret("http://a.example", _result(429, {"retry-after": "120"}, 120.0), 1000.0)
    assert rules.state == "throttled"
    assert rules.retry_after == 120.0
    assert rules.expires_at == 1120.0


def test_503_with_retry_after_is_a_throttle_and_without_is_not() -> None:
    cache = RobotsCache()
    with_ra = cache.interpret("http://a.example", _result(503, {"retry-after": "60"}, 60.0), 0.0)
    without = cache.interpret("http://a.example", _result(503, {}, None), 0.0)
    assert with_ra.state == "throttled"
    assert without.state == "disallow_all"  # a plain 5xx: the site cannot tell us, briefly


async def test_verdict_gives_what_is_left_of_the_delay() -> None:
    now = [1000.0]
    cache = RobotsCache(clock=lambda: now[0])
    origin = "http://a.example"
    cache._cache[origin] = cache.interpret(origin, _result(429, {}, 600.0), now[0])
    now[0] += 200.0
    verdict = await cache.check(origin + "/feed")
    assert not verdict.allowed
    assert verdict.kind == "throttled"
    assert verdict.retry_after == 400.0
