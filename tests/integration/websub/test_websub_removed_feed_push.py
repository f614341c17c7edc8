"""A push for a subscription whose feed was removed (the row survives, feed_id NULL, until the
upkeep's unsubscribe): nothing will ever process it, so it must be answered 410 (the hub drops
us) and counted ``gone`` — not stored, answered 202 and counted ``accepted``. Real HTTP on
loopback, on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime

from aiohttp import ClientSession

from fairfetch.store import open_store
from fairfetch.websub.hub_client import callback_url
from fairfetch.websub.service import WebSubService
from fairfetch.websub.signature import sign
from fairfetch.websub.status import websub_stats

from .conftest import loopback_settings, serve_callback, subscribed_feed

T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
TOPIC = "http://pub.test/f"


async def test_websub_push_for_a_removed_feed_is_gone_not_accepted(db_url: str, tmp_path) -> None:
    settings = loopback_settings(tmp_path).replace(db=db_url)
    store = open_store(db_url)
    feed, sub = subscribed_feed(store, T0)
    store.delete_feed(feed.id)
    service = WebSubService(store, settings, clock=lambda: T0)
    try:
        async with serve_callback(service) as base, ClientSession() as session:
            body = b"<feed xmlns='http://www.w3.org/2005/Atom'/>"
            async with session.post(callback_url(base, sub.callback_token), data=body,
                                    headers={"X-Hub-Signature": sign("k" * 40, body)}) as resp:
                assert resp.status == 410
        stats = websub_stats(store, T0)
        assert stats["gone"] == 1
        assert stats["accepted"] == 0
        assert stats["received"] == 1
        assert stats["queue"] == {}
    finally:
        await service.aclose()
        store.close()
