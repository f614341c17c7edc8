"""The documented list of error kinds (``fairfetch.net.ERROR_KINDS``, what ``crawls.error_kind``
may hold) names every kind feed health weighs: a kind added on one side only is a kind an
operator cannot look up."""

from __future__ import annotations

from fairfetch.crawl.health import FAILURE_WEIGHTS
from fairfetch.net.outcome import ERROR_KINDS


def test_crawl_every_weighed_error_kind_is_documented() -> None:
    assert set(FAILURE_WEIGHTS) - set(ERROR_KINDS) == set()
