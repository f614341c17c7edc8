"""Review of a907a67's crawl/redecide.py ``feed_changes`` (the columns a decision writes, used
by the crawl loop and by the store's re-decision).

A feed that moves (two permanent redirects to one target, or ``itunes:new-feed-url``) takes the
politeness key of its new URL, with the backend named by this fetch. ``extra`` names the
backend only when it differs from the feed's (fetch_reading.metadata_changes): a feed on a
platform that stays on it, a publication moving from ``alice.letterbox.test`` to its custom
domain (the common move), got its new domain's key, a budget of its own on the platform's
servers, for ever (the backend, unchanged, is never named again). DESIGN.md: "the detected
backend if one is known". Pure: no traffic."""

from __future__ import annotations

from datetime import UTC, datetime

from fairfetch.crawl.fetch_reading import feed_state
from fairfetch.crawl.health import HealthPolicy, Outcome, decide
from fairfetch.crawl.redecide import Redecision, feed_changes
from fairfetch.store import FeedRecord

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
POLICY = HealthPolicy()
PLATFORM = "backend:letterbox"
OLD = "https://alice.letterbox.test/feed"
NEW = "https://alice-writes.example/feed"


def _feed(**kw: object) -> FeedRecord:
    values: dict[str, object] = {
        "id": 1, "url": OLD, "original_url": OLD, "politeness_key": PLATFORM,
        "status": "ok", "error_count": 0, "added_at": NOW, "backend": PLATFORM,
    }
    values.update(kw)
    return FeedRecord(**values)  # type: ignore[arg-type]


def _moved(feed: FeedRecord, extra: dict[str, object]) -> dict[str, object]:
    outcome = Outcome("ok", http_status=200, new_feed_url=NEW)
    decision = decide(feed_state(feed), outcome, NOW, POLICY)
    assert decision.changes["url"] == NEW
    return feed_changes(feed, decision, extra, None)


def test_review_s11_a_platform_feed_moving_to_its_custom_domain_keeps_the_platform_key() -> None:
    changes = _moved(_feed(), {"title": "Alice"})  # the backend, unchanged, is not named
    assert changes["url"] == NEW
    assert changes["politeness_key"] == PLATFORM


def test_review_s11_the_redecided_move_keeps_it_too() -> None:
    feed = _feed()
    outcome = Outcome("ok", http_status=200, new_feed_url=NEW)
    changes = Redecision(outcome, NOW, POLICY, {"title": "Alice"}).changes(feed)
    assert changes["politeness_key"] == PLATFORM


def test_review_s11_a_move_takes_a_newly_named_backend_or_the_new_domain() -> None:
    """The negatives: a backend this fetch named wins; a feed on no backend takes its new
    URL's domain, as before."""
    assert _moved(_feed(), {"backend": "backend:ghost"})["politeness_key"] == "backend:ghost"
    plain = _feed(url="https://old.example/feed", politeness_key="old.example", backend=None)
    assert _moved(plain, {})["politeness_key"] == "alice-writes.example"
