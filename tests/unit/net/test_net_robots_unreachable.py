"""An unreachable robots.txt (RFC 9309 §2.3.1.4): what stands in for it, and what it is called.

A 5xx on robots.txt says nothing forbidding and nothing about the feed: the refusal it causes
(when no good answer stands in) is of its own kind, ``robots_unreachable``, which the health
decision does not count against the feed. The last good answer stands in for up to
``stale_for`` — the rules of a 2xx, and just as well the "no rules" of a 4xx.
"""

from __future__ import annotations

import pytest

from fairfetch.net.outcome import FetchResult
from fairfetch.net.robots import RobotsCache, RobotsCopy

ORIGIN = "http://site.test"
ROBOTS = b"User-agent: *\nDisallow: /private\n"


def _result(
    status: int | None,
    body: bytes = b"",
    error_kind: str | None = None,
    headers: dict[str, str] | None = None,
    retry_after: float | None = None,
) -> FetchResult:
    url = ORIGIN + "/robots.txt"
    return FetchResult(
        url=url,
        final_url=url,
        status=status,
        body=body,
        error_kind=error_kind,
        error_detail="detail" if error_kind else "",
        headers=headers or {},
        retry_after=retry_after,
    )


def _cache() -> RobotsCache:
    return RobotsCache(ttl=100.0, error_ttl=10.0, stale_for=1000.0)


@pytest.mark.parametrize("status", [500, 502, 503, 504, 599])
def test_a_5xx_without_a_good_answer_is_robots_unreachable_not_robots(status: int) -> None:
    rules = _cache().interpret(ORIGIN, _result(status), 0.0)
    assert rules.state == "disallow_all"
    assert rules.error_kind == "robots_unreachable"
    assert rules.expires_at == 10.0  # briefly: asked again after error_ttl
    assert str(status) in rules.detail


async def test_the_verdict_of_a_5xx_names_robots_unreachable() -> None:
    cache = _cache()
    cache._cache[ORIGIN] = cache.interpret(ORIGIN, _result(503), cache._clock())
    verdict = await cache.check(ORIGIN + "/feed.xml")
    assert not verdict.allowed
    assert verdict.kind == "robots_unreachable"


async def test_a_disallow_by_the_rules_is_still_robots() -> None:
    cache = _cache()
    cache._cache[ORIGIN] = cache.interpret(ORIGIN, _result(200, ROBOTS), cache._clock())
    verdict = await cache.check(ORIGIN + "/private/feed.xml")
    assert (verdict.allowed, verdict.kind) == (False, "robots")


@pytest.mark.parametrize("status", [404, 410, 403])
def test_a_4xx_answer_stands_in_for_a_5xx_like_a_copy_of_rules(status: int) -> None:
    cache = _cache()
    none = cache.interpret(ORIGIN, _result(status), 0.0)
    assert none.state == "allow_all"
    during = cache.interpret(ORIGIN, _result(503), 500.0, none)
    assert during.state == "allow_all"
    assert during.can_fetch(ORIGIN + "/anything", "fairfetch")
    assert during.expires_at == 510.0
    assert during.error_kind == "robots_unreachable"  # never saved: error_kind is set
    # ... and keeps standing in while robots.txt stays down, until stale_for.
    later = cache.interpret(ORIGIN, _result(500), 900.0, during)
    assert later.state == "allow_all"
    too_old = cache.interpret(ORIGIN, _result(500), 1001.0, later)
    assert too_old.state == "disallow_all"


def test_a_stored_no_rules_copy_stands_in_for_a_5xx() -> None:
    wall = [1_800_000_000.0]
    cache = RobotsCache(ttl=100.0, error_ttl=10.0, stale_for=1000.0, wall=lambda: wall[0])
    restored = cache.restore(RobotsCopy(ORIGIN, "allow_all", 404, None, wall[0] - 500.0))
    during = cache.interpret(ORIGIN, _result(503), cache._clock(), restored)
    assert during.state == "allow_all"


@pytest.mark.parametrize("kind", ["timeout", "connect"])
def test_a_2xx_cut_off_mid_body_is_unreachable_not_no_rules(kind: str) -> None:
    cache = _cache()
    cut = cache.interpret(ORIGIN, _result(200, b"User-agent: *\nDis", kind), 0.0)
    assert cut.state == "disallow_all"
    assert cut.error_kind == kind
    assert cut.expires_at == 10.0  # not cached for a day
    good = cache.interpret(ORIGIN, _result(200, ROBOTS), 0.0)
    standing = cache.interpret(ORIGIN, _result(200, b"", kind), 50.0, good)
    assert standing.state == "parsed"
    assert not standing.can_fetch(ORIGIN + "/private/x", "fairfetch")


@pytest.mark.parametrize("kind", ["dns", "connect", "timeout", "tls"])
def test_an_unreachable_origin_keeps_its_network_kind(kind: str) -> None:
    rules = _cache().interpret(ORIGIN, _result(None, error_kind=kind), 0.0)
    assert (rules.state, rules.error_kind) == ("disallow_all", kind)


def test_a_429_with_a_copy_too_old_to_stand_in_is_still_a_throttle() -> None:
    cache = _cache()
    good = cache.interpret(ORIGIN, _result(200, ROBOTS), 0.0)
    throttle = _result(429, headers={"retry-after": "120"}, retry_after=120.0)
    within = cache.interpret(ORIGIN, throttle, 500.0, good)
    assert within.state == "parsed"  # the good copy stands in: no need to wait
    past = cache.interpret(ORIGIN, throttle, 5000.0, good)
    assert past.state == "throttled"  # not a disallow counted against the feeds
    assert past.retry_after == 120.0
