"""The callback against a hub (or anyone) sending what a hub should not: an absurd granted lease,
and bodies larger than any feed we would fetch. Real HTTP on loopback (our callback app served by
uvicorn, an aiohttp client), on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest

from fairfetch.store import websub_repo as repo
from fairfetch.websub.hub_client import callback_url

from .conftest import Callback

T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


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


# --- bodies larger than the cap (settings.max_body_bytes, the fetch cap) ---

CAP = 64 * 1024


@pytest.fixture
def small_cap(callback: Callback) -> Callback:
    callback.service.settings = callback.service.settings.replace(max_body_bytes=CAP)
    return callback


def _signed(body: bytes) -> dict[str, str]:
    from fairfetch.websub.signature import sign

    return {"X-Hub-Signature": sign("k" * 40, body, "sha256"), "Content-Type": "text/xml"}


async def _chunks(body: bytes, size: int = 8192) -> AsyncIterator[bytes]:
    for i in range(0, len(body), size):
        yield body[i : i + size]


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
async def test_websub_oversized_delivery_is_refused_not_queued(
    small_cap: Callback, chunked: bool
) -> None:
    cb = small_cap
    body = b"<x>" + b"a" * (4 * CAP) + b"</x>"
    data = _chunks(body) if chunked else body
    async with cb.session.post(cb.url, data=data, headers=_signed(body)) as resp:
        assert resp.status == 413
    assert repo.delivery_counts(cb.store) == {}  # nothing stored
    stats = repo.ping_counts(cb.store, T0 - timedelta(days=1))
    assert stats == {"rejected": 1}  # counted, not silent
    assert repo.rejected_reasons(cb.store, T0 - timedelta(days=1)) == {"too_large": 1}


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
async def test_websub_delivery_at_the_cap_is_accepted(small_cap: Callback, chunked: bool) -> None:
    cb = small_cap
    body = b"<x>" + b"a" * (CAP - 7) + b"</x>"
    assert len(body) == CAP
    data = _chunks(body) if chunked else body
    async with cb.session.post(cb.url, data=data, headers=_signed(body)) as resp:
        assert resp.status == 202
    assert repo.delivery_counts(cb.store) == {"queued": 1}


async def test_websub_oversized_delivery_for_unknown_callback_is_404(small_cap: Callback) -> None:
    cb = small_cap
    url = callback_url(cb.base, "no-such-token")
    async with cb.session.post(url, data=b"a" * (4 * CAP)) as resp:
        assert resp.status == 404
    assert repo.ping_counts(cb.store, T0 - timedelta(days=1)) == {"unknown": 1}


@pytest.mark.parametrize("left", ["unsubscribing", "unsubscribed", "feed removed"])
async def test_websub_oversized_delivery_for_a_subscription_we_left_is_gone(
    small_cap: Callback, left: str
) -> None:
    """410 tells the hub to drop us (the table in docs/websub.md); a 413 for a subscription we
    have left had the hub retry its too-large body until its own limit, each retry counted
    rejected instead of gone."""
    from fairfetch.websub.state import Event

    cb = small_cap
    if left == "feed removed":
        assert cb.sub.feed_id is not None
        cb.store.delete_feed(cb.sub.feed_id)
    else:
        repo.apply_event(cb.store, cb.sub.id, Event.UNSUBSCRIBE_REQUESTED, T0)
        if left == "unsubscribed":
            repo.apply_event(cb.store, cb.sub.id, Event.UNSUBSCRIBE_VERIFIED, T0)
    for chunked in (False, True):
        body = b"<x>" + b"a" * (4 * CAP) + b"</x>"
        data = _chunks(body) if chunked else body
        async with cb.session.post(cb.url, data=data, headers=_signed(body)) as resp:
            assert resp.status == 410
    assert repo.ping_counts(cb.store, T0 - timedelta(days=1)) == {"gone": 2}
    assert repo.delivery_counts(cb.store) == {}
