"""The hub verifies with the topic as *it* spells it. WebSub §5.1.1: "Hubs MUST always decode
non-reserved characters for these URL parameters", so a self URL written with ``%7E`` comes back
with ``~``; hubs that take IRIs percent-encode the rest (``é`` as ``%C3%A9``) or write the hex in
either case. The same topic must be recognised — a 404 left the subscription pending for ever,
re-requested every hour with no error — and a different topic still gets 404.
Our callback app on loopback, real HTTP, on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from aiohttp import ClientSession

from fairfetch.store import SqlStore, open_store
from fairfetch.store import websub_repo as repo
from fairfetch.websub.hub_client import callback_url
from fairfetch.websub.service import WebSubService

from .conftest import loopback_settings, serve_callback

T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
#: as the publisher's rel=self wrote it, hence as we subscribed
TOPIC = "http://pub.test/%7ejohn/f%c3%a9ed.xml?tag=caf%c3%a9&q=a%2Fb"

SAME = [
    "http://pub.test/~john/f%C3%A9ed.xml?tag=caf%C3%A9&q=a%2Fb",    # unreserved decoded (§5.1.1)
    "http://pub.test/%7Ejohn/f%C3%A9ed.xml?tag=caf%C3%A9&q=a%2Fb",  # hex in upper case
    "http://pub.test/~john/féed.xml?tag=café&q=a%2fb",              # as an IRI
    "HTTP://PUB.test/~john/f%c3%a9ed.xml?tag=caf%c3%a9&q=a%2Fb",    # scheme and host case
]
OTHER = [
    "http://pub.test/~jane/f%C3%A9ed.xml?tag=caf%C3%A9&q=a%2Fb",
    "http://pub.test/~john/f%C3%A9ed.xml?tag=caf%C3%A9&q=a/b",      # %2F is not "/" (reserved)
    "http://pub.test/~John/f%C3%A9ed.xml?tag=caf%C3%A9&q=a%2Fb",    # path case matters
    "http://pub.test/~john/f%C3%A9ed.xml?tag=caf%C3%A9&q=a%2Fb&x",
    "https://pub.test/~john/f%C3%A9ed.xml?tag=caf%C3%A9&q=a%2Fb",
]


Pending = tuple[SqlStore, repo.SubscriptionRecord, str, ClientSession]


@pytest.fixture
async def pending(db_url: str, tmp_path: Path) -> AsyncIterator[Pending]:
    store = open_store(db_url)
    feed, _ = store.add_feed("http://pub.test/feed", now=T0, politeness_key="pub.test")
    sub = repo.create_subscription(store, feed_id=feed.id, hub_url="http://hub.test/",
                                   topic_url=TOPIC, secret="k" * 40, requested_lease=86400,
                                   now=T0)
    service = WebSubService(store, loopback_settings(tmp_path).replace(db=db_url),
                            clock=lambda: T0)
    try:
        async with serve_callback(service) as base, ClientSession() as session:
            yield store, sub, callback_url(base, sub.callback_token), session
    finally:
        await service.aclose()
        store.close()


@pytest.mark.parametrize("spelling", SAME)
async def test_websub_verification_with_the_hubs_spelling_of_our_topic(
    pending: Pending, spelling: str
) -> None:
    store, sub, url, session = pending
    params = {"hub.mode": "subscribe", "hub.topic": spelling, "hub.challenge": "c-1",
              "hub.lease_seconds": "3600"}
    async with session.get(url, params=params) as resp:
        assert (resp.status, await resp.text()) == (200, "c-1")
    rec = repo.get_subscription(store, sub.id)
    assert rec is not None
    assert rec.state == "active"
    assert rec.topic_url == TOPIC  # kept as discovered: it is what we ask the hub for


@pytest.mark.parametrize("other", OTHER)
async def test_websub_verification_for_another_topic_is_still_404(
    pending: Pending, other: str
) -> None:
    store, sub, url, session = pending
    for mode in ("subscribe", "denied"):
        params = {"hub.mode": mode, "hub.topic": other, "hub.challenge": "c-1",
                  "hub.lease_seconds": "3600"}
        async with session.get(url, params=params) as resp:
            assert (resp.status, await resp.text()) == (404, ""), mode
    rec = repo.get_subscription(store, sub.id)
    assert rec is not None
    assert rec.state == "pending"


async def test_websub_denial_with_the_hubs_spelling_of_our_topic(
    pending: Pending,
) -> None:
    store, sub, url, session = pending
    params = {"hub.mode": "denied", "hub.topic": SAME[0], "hub.reason": "no"}
    async with session.get(url, params=params) as resp:
        assert resp.status == 200
    rec = repo.get_subscription(store, sub.id)
    assert rec is not None
    assert (rec.state, rec.denied_reason) == ("denied", "no")
