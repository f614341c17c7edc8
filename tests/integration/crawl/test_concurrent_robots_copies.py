"""Two processes on PostgreSQL save a robots.txt copy of one origin at the same moment (a cron
pass and the web process's re-fetch on a WebSub ping, both reading the same host).

The save replaced a copy by DELETE then INSERT: the second saver's DELETE did not see the first
one's uncommitted row, its INSERT then broke the primary key once that committed, and the whole
save failed, every other origin's copy in it with it (each costing a robots.txt request again on
the next run). Now the newer copy simply replaces the older one. The interleaving is forced:
B's INSERT starts only once A has committed.
"""

from __future__ import annotations

from datetime import UTC, datetime

import sqlalchemy as sa

from fairfetch.net.robots import RobotsCopy
from fairfetch.store import open_store
from fairfetch.store.robots_repo import load_robots_many, save_robots
from fairfetch.store.tables_robots import robots_txt


def test_concurrent_robots_copies_of_one_origin_both_save(pg_url: str) -> None:
    first = open_store(pg_url)
    second = open_store(pg_url)
    try:
        t = datetime(2026, 11, 30, 12, tzinfo=UTC).timestamp()
        conn_a = first.engine.connect()
        tx_a = conn_a.begin()
        # Process A's save of the shared origin, in flight (its statement, its transaction).
        conn_a.execute(robots_txt.insert(), [{
            "origin": "http://shared.test", "state": "parsed", "status": 200,
            "body": "User-agent: *\nDisallow: /a\n",
            "fetched_at": datetime.fromtimestamp(t, UTC),
        }])
        committed: list[bool] = []

        def commit_a_first(_conn, _cursor, statement, _params, _context, _many):  # type: ignore[no-untyped-def]
            if statement.lstrip().upper().startswith("INSERT INTO ROBOTS_TXT") and not committed:
                tx_a.commit()
                committed.append(True)

        sa.event.listen(second.engine, "before_cursor_execute", commit_a_first)
        try:
            saved = save_robots(second, [
                RobotsCopy("http://shared.test", "parsed", 200, "User-agent: *\nDisallow: /b\n",
                           t + 1),
                RobotsCopy("http://other.test", "allow_all", 404, None, t + 1),
            ])
        finally:
            sa.event.remove(second.engine, "before_cursor_execute", commit_a_first)
            conn_a.close()
        assert committed == [True]  # the race happened
        assert saved == 2
        stored = load_robots_many(first, ["http://shared.test", "http://other.test"])
        assert stored["http://shared.test"].body == "User-agent: *\nDisallow: /b\n"  # the newer
        assert stored["http://other.test"].state == "allow_all"

        # An older copy arriving late does not replace a newer one.
        save_robots(second, [RobotsCopy("http://shared.test", "parsed", 200, "old", t - 60)])
        stored = load_robots_many(first, ["http://shared.test"])
        assert stored["http://shared.test"].body == "User-agent: *\nDisallow: /b\n"
    finally:
        second.close()
        first.close()


def test_concurrent_robots_copy_saved_late_keeps_the_newer(db_url: str) -> None:
    """Two processes' saves of one origin land in any order: the copy fetched last stands."""
    store = open_store(db_url)
    try:
        t = datetime(2026, 11, 30, 12, tzinfo=UTC).timestamp()
        save_robots(store, [RobotsCopy("http://o.test", "parsed", 200, "newer", t)])
        save_robots(store, [RobotsCopy("http://o.test", "allow_all", 404, None, t - 1)])
        assert load_robots_many(store, ["http://o.test"])["http://o.test"].body == "newer"
        save_robots(store, [RobotsCopy("http://o.test", "allow_all", 404, None, t + 1)])
        now = load_robots_many(store, ["http://o.test"])["http://o.test"]
        assert (now.state, now.body, now.fetched_at) == ("allow_all", None, t + 1)
    finally:
        store.close()
