"""robots.txt copies in the store, on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from fairfetch.net.robots import RobotsCopy
from fairfetch.store import SqlStore, open_store
from fairfetch.store.robots_repo import load_robots, load_robots_many, prune_robots, save_robots

T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC).timestamp()


@pytest.fixture
def store(db_url: str) -> Iterator[SqlStore]:
    s = open_store(db_url)
    yield s
    s.close()


def test_a_copy_comes_back_as_saved(store: SqlStore) -> None:
    body = "User-agent: *\nDisallow: /private\n# café ☕\n"
    assert save_robots(store, [RobotsCopy("https://a.test", "parsed", 200, body, T0)]) == 1
    assert load_robots(store, "https://a.test") == RobotsCopy(
        "https://a.test", "parsed", 200, body, T0
    )
    assert load_robots(store, "https://b.test") is None


def test_saving_replaces_and_the_newest_copy_of_an_origin_wins(store: SqlStore) -> None:
    save_robots(store, [RobotsCopy("https://a.test", "parsed", 200, "Disallow: /x", T0)])
    save_robots(
        store,
        [
            RobotsCopy("https://a.test", "allow_all", 404, None, T0 + 20),
            RobotsCopy("https://a.test", "parsed", 200, "Disallow: /old", T0 + 10),
            RobotsCopy("http://b.test:8080", "allow_all", 410, None, T0 + 5),
        ],
    )
    assert load_robots(store, "https://a.test") == RobotsCopy(
        "https://a.test", "allow_all", 404, None, T0 + 20
    )
    assert load_robots(store, "http://b.test:8080") is not None


def test_prune_forgets_only_copies_older_than_the_limit(store: SqlStore) -> None:
    save_robots(
        store,
        [
            RobotsCopy("https://old.test", "parsed", 200, "", T0 - 100),
            RobotsCopy("https://new.test", "parsed", 200, "", T0),
        ],
    )
    assert prune_robots(store, datetime.fromtimestamp(T0 - 50, UTC)) == 1
    assert load_robots(store, "https://old.test") is None
    assert load_robots(store, "https://new.test") is not None


def test_many_at_once_leaves_absent_origins_out(store: SqlStore) -> None:
    copies = [RobotsCopy(f"https://h{i}.test", "allow_all", 404, None, T0) for i in range(450)]
    save_robots(store, copies)
    wanted = [c.origin for c in copies] + ["https://absent.test"]
    assert load_robots_many(store, wanted) == {c.origin: c for c in copies}
