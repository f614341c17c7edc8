"""With ``public_url`` on loopback (the default), a feed whose hub lives on another machine is
not subscribed there: the hub could never verify a callback on our loopback. The feed is polled,
the reason is said, and no request goes to the hub. The far hub's name resolves (by
FAIRFETCH_RESOLVE) to 192.0.2.7, an address the perimeter refuses too, so even a regression
cannot send traffic off the machine."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from fairfetch.store import open_store
from fairfetch.store import websub_repo as repo
from fairfetch.websub.service import WebSubService

from .conftest import Subscriber, TestHub, loopback_settings, running_subscriber
from .test_websub_hostile_discovery import _atom, _serve


@pytest.fixture
async def far_hub_subscriber(tmp_path: Any) -> AsyncIterator[Subscriber]:
    settings = loopback_settings(tmp_path, resolve=("hub.far.test:192.0.2.7",))
    async with running_subscriber(settings) as sub:
        yield sub


async def test_websub_far_hub_is_not_asked_to_call_our_loopback(
    far_hub_subscriber: Subscriber, test_hub: TestHub
) -> None:
    sub = far_hub_subscriber
    assert sub.settings.public_url.startswith("http://127.0.0.1:")
    far_url, near_url = test_hub.url("/t/far"), test_hub.url("/t/near")
    test_hub.topics["/t/far"] = _serve(_atom("http://hub.far.test/hub", far_url))
    test_hub.topics["/t/near"] = _serve(_atom(test_hub.url("/hub"), near_url))
    for url in (far_url, near_url):
        report = await sub.crawler.add([url])
        assert len(report.added) == 1, report
    far = sub.store.get_feed(far_url)
    near = sub.store.get_feed(near_url)

    outcome = await sub.service.subscribe_feed(far.id)
    assert outcome.subscription is None
    assert "public_url" in outcome.detail
    assert "hub.far.test" in outcome.detail
    assert repo.latest_for_feed(sub.store, far.id) is None  # nothing pending at the far hub

    counts = await sub.service.tick()
    assert counts["subscribed"] == 1  # the hub on this machine still gets its subscription
    assert repo.latest_for_feed(sub.store, far.id) is None
    near_sub = repo.latest_for_feed(sub.store, near.id)
    assert near_sub is not None
    assert [r.form["hub.topic"] for r in test_hub.requests] == [near_url]


async def test_websub_far_hub_subscription_from_before_is_not_renewed_there(
    far_hub_subscriber: Subscriber, test_hub: TestHub
) -> None:
    # A subscription to the far hub made before this check (or before public_url moved to
    # loopback): its retry fails with the reason instead of a request the hub cannot verify.
    from datetime import UTC, datetime

    sub = far_hub_subscriber
    far_url = test_hub.url("/t/far")
    test_hub.topics["/t/far"] = _serve(_atom("http://hub.far.test/hub", far_url))
    report = await sub.crawler.add([far_url])
    assert len(report.added) == 1, report
    feed = sub.store.get_feed(far_url)
    old = repo.create_subscription(
        sub.store, feed_id=feed.id, hub_url="http://hub.far.test/hub", topic_url=far_url,
        secret="s", requested_lease=3600, now=datetime.now(UTC),
    )  # fmt: skip
    rec = await sub.service.request(old, "subscribe")
    assert rec.state == "expired"  # the feed is polled
    assert rec.last_error is not None
    assert "public_url" in rec.last_error
    assert "hub.far.test" in rec.last_error


@pytest.mark.parametrize(
    ("public_url", "warned"),
    [("http://127.0.0.1:8080", True), ("http://10.0.0.5:8080", True),
     ("https://ff.example.org", False)],
)
async def test_websub_upkeep_says_once_when_public_url_is_not_reachable_from_afar(
    tmp_path: Any, caplog: pytest.LogCaptureFixture, public_url: str, warned: bool
) -> None:
    import asyncio
    import logging

    settings = loopback_settings(tmp_path, public_url=public_url)
    store = open_store(settings.db)
    service = WebSubService(store, settings)
    stop = asyncio.Event()
    stop.set()  # no pass: only what is said at start
    try:
        with caplog.at_level(logging.WARNING, logger="fairfetch.websub"):
            await service.run_forever(stop)
    finally:
        await service.aclose()
        store.close()
    said = [r.getMessage() for r in caplog.records if "public_url" in r.getMessage()]
    assert len(said) == (1 if warned else 0)
    if warned:
        assert public_url in said[0]
        assert "FAIRFETCH_PUBLIC_URL" in said[0]
