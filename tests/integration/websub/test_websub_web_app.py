"""The callback routes inside the real web app (create_app), not only our minimal one."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import httpx

from fairfetch.config import Settings
from fairfetch.store import open_store
from fairfetch.store import websub_repo as repo
from fairfetch.web.app import create_app
from fairfetch.websub.signature import sign


async def test_websub_routes_in_web_app(tmp_path: Path) -> None:
    settings = Settings(db=f"sqlite:///{tmp_path}/ff.db")
    store = open_store(settings.db)
    try:
        feed, _ = store.add_feed("http://pub.test/f", now=datetime.now(UTC),
                                 politeness_key="pub.test")
        sub = repo.create_subscription(store, feed_id=feed.id, hub_url="http://hub.test/",
                                       topic_url="http://pub.test/f", secret="k" * 40,
                                       requested_lease=100, now=datetime.now(UTC))
        app = create_app(settings, store)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            path = f"/websub/callback/{sub.callback_token}"
            r = await client.get(path, params={"hub.mode": "subscribe", "hub.topic": sub.topic_url,
                                               "hub.challenge": "c-1", "hub.lease_seconds": "77"})
            assert (r.status_code, r.text) == (200, "c-1")
            r = await client.get(path, params={"hub.mode": "subscribe", "hub.topic": "http://x/",
                                               "hub.challenge": "c-2"})
            assert r.status_code == 404
            # serve-only (no crawler): a signed ping is queued durably for `run` to process
            r = await client.post(path, content=b"ping", headers={
                "X-Hub-Signature": sign("k" * 40, b"ping", "sha384")})
            assert r.status_code == 202
            r = await client.post(path, content=b"ping")
            assert r.status_code == 403
        after = repo.get_subscription(store, sub.id)
        assert after is not None
        assert (after.state, after.lease_seconds) == ("active", 77)
        assert repo.delivery_counts(store) == {"queued": 1}
    finally:
        store.close()
