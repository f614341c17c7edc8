"""A politeness key's stored pause: the latest end wins, a pause over is no pause."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import sqlalchemy as sa

from fairfetch.store import open_store
from fairfetch.store.politeness_repo import load_key_pauses, save_key_pauses
from fairfetch.store.tables_politeness import politeness_keys

T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def test_store_key_pauses_latest_end_wins_and_over_is_forgotten(db_url: str) -> None:
    store = open_store(db_url)
    try:
        hour, minute = T0 + timedelta(hours=1), T0 + timedelta(minutes=1)
        assert save_key_pauses(store, {"a.test": hour, "b.test": minute}, T0) == 2
        # A shorter Retry-After told to another process does not reopen the key.
        save_key_pauses(store, {"a.test": minute}, T0)
        # A longer one extends it.
        save_key_pauses(store, {"b.test": hour}, T0)
        assert load_key_pauses(store, ["a.test", "b.test", "c.test"], T0) == {
            "a.test": hour, "b.test": hour,
        }  # fmt: skip
        # Only the keys asked for; and at the end of the pause the key is open.
        assert load_key_pauses(store, ["b.test"], T0) == {"b.test": hour}
        assert load_key_pauses(store, ["a.test"], hour) == {}
        # An end already past is not stored, and a save forgets the pauses that are over.
        assert save_key_pauses(store, {"c.test": T0}, hour) == 0
        with store.engine.connect() as conn:
            left = conn.execute(sa.select(sa.func.count()).select_from(politeness_keys))
            assert left.scalar_one() == 0
    finally:
        store.close()


def test_store_key_pauses_many_keys_in_one_read(db_url: str) -> None:
    store = open_store(db_url)
    try:
        ends = {f"k{i}.test": T0 + timedelta(seconds=60 + i) for i in range(900)}
        save_key_pauses(store, ends, T0)
        assert load_key_pauses(store, [*ends, "other.test"], T0) == ends
    finally:
        store.close()


def test_store_current_key_pauses_are_the_keys_closed_now(db_url: str) -> None:
    from fairfetch.store.politeness_repo import current_key_pauses

    store = open_store(db_url)
    try:
        hour, minute = T0 + timedelta(hours=1), T0 + timedelta(minutes=1)
        save_key_pauses(store, {"a.test": hour, "b.test": minute}, T0)
        assert current_key_pauses(store, T0) == {"a.test": hour, "b.test": minute}
        assert current_key_pauses(store, minute) == {"a.test": hour}
        assert current_key_pauses(store, hour) == {}
    finally:
        store.close()
