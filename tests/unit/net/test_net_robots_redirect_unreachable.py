"""robots.txt redirected to another host that cannot be reached (its CDN down, a name that no
longer resolves): RFC 9309 §2.3.1.4 says disallow while it is unreachable, and we do; but the
refusal kept the network kind (``dns``, ``connect``…), which the crawler counts as the feed's
own failure (DNS weighs 3: dead after ten) and as a sign of our own outage. That kind is kept
for an origin that cannot be reached because the feed lives there; here the origin answered —
with a redirect — and another host failed: the publisher's server failed on another URL than
the feed, which is what ``robots_unreachable`` (deferred, no health change) is for."""

from __future__ import annotations

import pytest

from fairfetch.net.outcome import FetchResult, Hop
from fairfetch.net.robots import RobotsCache

ORIGIN = "http://site.test"


def _redirected(final: str, kind: str) -> FetchResult:
    url = ORIGIN + "/robots.txt"
    return FetchResult(
        url=url,
        final_url=final,
        status=None,
        error_kind=kind,
        error_detail="detail",
        hops=(Hop(url, 301, final),),
    )


@pytest.mark.parametrize("kind", ["dns", "connect", "timeout", "tls"])
def test_another_host_unreachable_behind_a_redirect_is_robots_unreachable(kind: str) -> None:
    result = _redirected("http://cdn.other.test/robots.txt", kind)
    rules = RobotsCache().interpret(ORIGIN, result, 0.0)
    assert rules.state == "disallow_all"  # still: nothing is read while it is unreachable
    assert rules.error_kind == "robots_unreachable"
    assert kind in rules.detail


@pytest.mark.parametrize("kind", ["dns", "connect", "timeout"])
def test_the_same_host_unreachable_after_a_redirect_keeps_its_network_kind(kind: str) -> None:
    result = _redirected("https://site.test/robots.txt", kind)
    rules = RobotsCache().interpret(ORIGIN, result, 0.0)
    assert (rules.state, rules.error_kind) == ("disallow_all", kind)
