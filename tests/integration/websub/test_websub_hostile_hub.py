"""The callback against a hub (or anyone) sending what a hub should not: an absurd granted lease,
and bodies larger than any feed we would fetch. Real HTTP on loopback (our callback app served by
uvicorn, an aiohttp client), on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest
from aiohttp import ClientSession

from fairfetch.store import SqlStore, open_store
from fairfetch.store import websub_repo as repo
from fairfetch.websub.hub_client import callback_url
from fairfetch.websub.service import WebSubService

from .conftest import loopback_settings, serve_callback

T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


@dataclass
class Callback:
    store: SqlStore
    service: WebSubService
    base: str
    sub: repo.SubscriptionRecord
    session: ClientSession

    @property
    def url(self) -> str:
        return callback_url(self.base, self.sub.callback_token)


@pytest.fixture
async def callback(db_url: str, tmp_path) -> AsyncIterator[Callback]:
    settings = loopback_settings(tmp_path).replace(db=db_url)
    store = open_store(db_url)
    feed, _ = store.add_feed("http://pub.test/f", now=T0, politeness_key="pub.test")
    sub = repo.create_subscription(store, feed_id=feed.id, hub_url="http://hub.test/",
                                   topic_url="http://pub.test/f", secret="k" * 40,
                                   requested_lease=86400, now=T0)
    service = WebSubService(store, settings, clock=lambda: T0)
    try:
        async with serve_callback(service) as base, ClientSession() as session:
            yield Callback(store, service, base, sub, session)
    finally:
        await service.aclose()
        store.close()


@pytest.mark.parametrize("granted", ["2147483648", "99999999999", str(10**15), str(10**40)])
async def test_websub_absurd_granted_lease_is_verified_and_renewed_in_time(
    callback: Callback, granted: str
) -> None:
    params = {"hub.mode": "subscribe", "hub.topic": "http://pub.test/f",
              "hub.challenge": "c-1", "hub.lease_seconds": granted}
    async with callback.session.get(callback.url, params=params) as resp:
        assert (resp.status, await resp.text()) == (200, "c-1")
    rec = repo.get_subscription(callback.store, callback.sub.id)
    assert rec is not None
    assert rec.state == "active"
    assert rec.lease_expires_at is not None
    assert rec.lease_expires_at > T0 + timedelta(days=1)  # longer than asked: the hub's grant
    assert rec.next_action_at is not None
    # renewed within a year, whatever the hub claims: a lease is never trusted to run forever
    assert T0 < rec.next_action_at <= T0 + timedelta(days=366)


async def test_websub_ordinary_granted_lease_is_kept_exactly(callback: Callback) -> None:
    params = {"hub.mode": "subscribe", "hub.topic": "http://pub.test/f",
              "hub.challenge": "c-1", "hub.lease_seconds": "864000"}
    async with callback.session.get(callback.url, params=params) as resp:
        assert (resp.status, await resp.text()) == (200, "c-1")
    rec = repo.get_subscription(callback.store, callback.sub.id)
    assert rec is not None
    assert rec.lease_seconds == 864000
    assert rec.lease_expires_at == T0 + timedelta(seconds=864000)
