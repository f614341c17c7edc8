"""The last good robots.txt copy, once too old to stand in, is still remembered.

Past ``stale_for`` an unreachable robots.txt is a complete disallow (RFC 9309 §2.3.1.4) and the
crawler, past its grace, reads the feed as if robots.txt were absent. RFC 9309 allows that *or*
keeping the cached copy; a directory operator expects the second where a copy exists: a feed the
publisher's last known rules disallow must not be fetched because robots.txt went down.
``last_good_allows`` answers from that copy (None when there never was one).
"""

from __future__ import annotations

from fairfetch.net.outcome import FetchResult
from fairfetch.net.robots import RobotsCache, RobotsCopy

ORIGIN = "http://site.test"
RULES = b"User-agent: *\nDisallow: /private\n"


def _result(status: int | None, body: bytes = b"") -> FetchResult:
    url = ORIGIN + "/robots.txt"
    return FetchResult(url=url, final_url=url, status=status, body=body)


def _cache(**kw: object) -> RobotsCache:
    return RobotsCache(ttl=100.0, error_ttl=10.0, stale_for=1000.0, **kw)  # type: ignore[arg-type]


def test_a_copy_too_old_to_stand_in_still_answers_for_its_rules() -> None:
    cache = _cache()
    good = cache.interpret(ORIGIN, _result(200, RULES), 0.0)
    assert good.last_good_allows(ORIGIN + "/private/feed", "fairfetch") is False
    during = cache.interpret(ORIGIN, _result(500), 500.0, good)
    too_old = cache.interpret(ORIGIN, _result(500), 1001.0, during)
    assert too_old.state == "disallow_all"  # as before: no stand-in past stale_for
    assert too_old.last_good_allows(ORIGIN + "/private/feed", "fairfetch") is False
    assert too_old.last_good_allows(ORIGIN + "/feed", "fairfetch") is True
    # ... and it is carried from one failed answer to the next.
    later = cache.interpret(ORIGIN, _result(503), 5000.0, too_old)
    assert later.last_good_allows(ORIGIN + "/private/feed", "fairfetch") is False


def test_a_no_rules_copy_allows_everything() -> None:
    cache = _cache()
    none = cache.interpret(ORIGIN, _result(404), 0.0)
    too_old = cache.interpret(ORIGIN, _result(500), 1001.0, none)
    assert too_old.state == "disallow_all"
    assert too_old.last_good_allows(ORIGIN + "/private/feed", "fairfetch") is True


def test_without_any_good_answer_there_is_no_copy_to_ask() -> None:
    cache = _cache()
    first = cache.interpret(ORIGIN, _result(500), 0.0)
    assert first.last_good_allows(ORIGIN + "/feed", "fairfetch") is None
    again = cache.interpret(ORIGIN, _result(500), 50.0, first)
    assert again.last_good_allows(ORIGIN + "/feed", "fairfetch") is None


def test_a_stored_copy_older_than_stale_for_is_the_last_good_copy() -> None:
    wall = [1_800_000_000.0]
    cache = _cache(wall=lambda: wall[0])
    old = RobotsCopy(ORIGIN, "parsed", 200, RULES.decode(), wall[0] - 5000.0)
    restored = cache.restore(old)
    down = cache.interpret(ORIGIN, _result(500), cache._clock(), restored)
    assert down.state == "disallow_all"
    assert down.last_good_allows(ORIGIN + "/private/x", "fairfetch") is False


async def test_the_cache_answers_for_the_origin_it_holds() -> None:
    cache = _cache()
    good = cache.interpret(ORIGIN, _result(200, RULES), 0.0)
    cache._cache[ORIGIN] = cache.interpret(ORIGIN, _result(500), 2000.0, good)
    assert cache.last_good_allows(ORIGIN + "/private/feed") is False
    assert cache.last_good_allows(ORIGIN + "/feed") is True
    assert cache.last_good_allows("http://other.test/feed") is None
