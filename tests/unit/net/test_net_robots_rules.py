"""RobotsRules.crawl_delay: the publisher's number, within the bounds the scheduler can take."""

from __future__ import annotations

import pytest
from protego import Protego

from fairfetch.net.robots import MAX_CRAWL_DELAY, RobotsRules


def rules(delay: str) -> RobotsRules:
    text = f"User-agent: *\nCrawl-delay: {delay}\n"
    return RobotsRules("https://a.example", "parsed", 0.0, 1.0, 200, parser=Protego.parse(text))


@pytest.mark.parametrize(
    ("delay", "expected"),
    [
        ("10", 10.0),
        ("0.5", 0.5),
        ("86400", 86400.0),
        ("99999999999", MAX_CRAWL_DELAY),
        ("1e300", MAX_CRAWL_DELAY),
    ],
)
def test_crawl_delay_is_kept_within_a_day(delay: str, expected: float) -> None:
    assert rules(delay).crawl_delay("fairfetch") == expected
    assert MAX_CRAWL_DELAY == 86400.0


def test_no_crawl_delay_is_none() -> None:
    r = RobotsRules(
        "https://a.example", "parsed", 0.0, 1.0, 200, parser=Protego.parse("User-agent: *\n")
    )
    assert r.crawl_delay("fairfetch") is None
