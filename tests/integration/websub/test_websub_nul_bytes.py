"""NUL bytes sent to the callback, which PostgreSQL text cannot hold: a token nobody was given is
exactly 404 (empty body) and counted ``unknown``, and a hub's denial reason is recorded — never a
database refusal turned into a 5xx. Real HTTP on loopback, on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from fairfetch.store import websub_repo as repo
from fairfetch.websub.hub_client import callback_url
from fairfetch.websub.status import websub_stats

from .conftest import Callback

T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
TOPIC = "http://pub.test/f"


@pytest.mark.parametrize("token", ["%00", "abc%00def", "%00" * 43])
async def test_websub_callback_token_with_nul_is_404_and_counted_unknown(
    callback: Callback, token: str
) -> None:
    url = f"{callback.base}/websub/callback/{token}"
    params = {"hub.mode": "subscribe", "hub.topic": TOPIC, "hub.challenge": "c-1",
              "hub.lease_seconds": "600"}
    async with callback.session.get(url, params=params) as resp:
        assert resp.status == 404
        assert await resp.read() == b""
    async with callback.session.post(url, data=b"<feed/>",
                                     headers={"X-Hub-Signature": "sha256=00"}) as resp:
        assert resp.status == 404
    stats = websub_stats(callback.store, T0)
    assert stats["unknown"] == 1
    assert stats["received"] == 1
    # the real subscription was not touched
    rec = repo.get_subscription(callback.store, callback.sub.id)
    assert rec is not None
    assert rec.state == "pending"


async def test_websub_denial_reason_with_nul_is_recorded(callback: Callback) -> None:
    url = callback_url(callback.base, callback.sub.callback_token)
    params = {"hub.mode": "denied", "hub.topic": TOPIC, "hub.reason": "bad\x00topic"}
    async with callback.session.get(url, params=params) as resp:
        assert resp.status == 200
    rec = repo.get_subscription(callback.store, callback.sub.id)
    assert rec is not None
    assert rec.state == "denied"
    assert rec.denied_reason is not None
    assert rec.denied_reason == "bad\ufffdtopic"
    assert "\x00" not in rec.denied_reason
