"""Posts to callback tokens we never issued are counted, not logged one row each.

Anyone may post to ``/websub/callback/<anything>``; each post wrote a ``websub_pings`` row, so a
stranger's loop grew the database without bound. Now the ``unknown`` ones within a minute share
one row and its ``pings`` count, and /crawlstats still counts every one of them (a number, not
a sample). Every other outcome stays one row per ping. Real HTTP on loopback, SQLite and
PostgreSQL.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import sqlalchemy as sa

from fairfetch.store import websub_repo as repo
from fairfetch.store.tables_websub import websub_pings
from fairfetch.websub.status import websub_stats

from .conftest import Callback

T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def _rows(callback: Callback) -> list[tuple[str, int]]:
    with callback.store.engine.connect() as conn:
        return [
            (str(o), int(n))
            for o, n in conn.execute(
                sa.select(websub_pings.c.outcome, websub_pings.c.pings).order_by(
                    websub_pings.c.id
                )
            )
        ]


async def test_websub_a_strangers_posts_to_unknown_tokens_make_one_row(
    callback: Callback,
) -> None:
    for i in range(50):
        url = f"{callback.base}/websub/callback/not-a-token-{i}"
        async with callback.session.post(url, data=b"<feed/>") as resp:
            assert resp.status == 404
    assert _rows(callback) == [("unknown", 50)]
    stats = websub_stats(callback.store, T0)
    assert stats["unknown"] == 50
    assert stats["received"] == 50


async def test_websub_known_token_pings_stay_one_row_each(callback: Callback) -> None:
    """The other direction: a ping on a real subscription is one row, each time (its detail
    and feed are per ping), even beside unknown ones."""
    for _ in range(3):
        async with callback.session.post(callback.url, data=b"<feed/>") as resp:
            assert resp.status in (202, 403, 410, 200)
    async with callback.session.post(f"{callback.base}/websub/callback/nope", data=b"") as resp:
        assert resp.status == 404
    rows = _rows(callback)
    assert [n for o, n in rows if o != "unknown"] == [1, 1, 1]
    assert [n for o, n in rows if o == "unknown"] == [1]
    assert websub_stats(callback.store, T0)["received"] == 4


def test_websub_unknown_pings_a_minute_apart_start_a_new_row(callback: Callback) -> None:
    store = callback.store
    for at in (T0, T0 + timedelta(seconds=30), T0 + timedelta(seconds=61)):
        repo.record_ping(store, subscription_id=None, feed_id=None, outcome="unknown",
                         http_status=404, now=at)
    assert _rows(callback) == [("unknown", 2), ("unknown", 1)]
    # the window of /crawlstats counts rows by their first ping's time
    assert websub_stats(store, T0)["unknown"] == 3
    assert websub_stats(store, T0 + timedelta(seconds=31))["unknown"] == 1
