"""Two crawl writers on PostgreSQL (two passes on disjoint politeness keys, or a pass and the web
process's re-fetch on a WebSub ping) store new items of two feeds that one reader takes in the
same daily digest, at the same moment: both open the reader's next issue.

Each looked the issue up before the other committed, and inserted it; the second insert broke
the unique dedupe key and failed its writer's whole batch (every feed's result in it, the new
items and their notifications with them, until a later crawl). Now the second finds the first's
issue and adds its item to it: one issue, holding both items. The interleaving is forced: B's
insert of the issue starts only once A has committed its own.
"""

from __future__ import annotations

from datetime import timedelta

import sqlalchemy as sa

from fairfetch.store import CrawlWrite, open_store
from fairfetch.store.batch_write import write_batch

from .conftest import T0, _world


def test_concurrent_writers_opening_one_digest_issue_both_succeed(pg_url: str) -> None:
    w = _world(pg_url)
    second = open_store(pg_url)
    try:
        f = w.add_feed("https://f.example.test/feed")
        g = w.add_feed("https://g.example.test/feed")
        w.subscribe("ana@example.test", f, mode="daily", hour=8)
        w.subscribe("ana@example.test", g, mode="daily", hour=8)
        at = T0 + timedelta(minutes=1)

        def write(feed_id: int, title: str) -> CrawlWrite:
            feed = w.store.get_feed(feed_id)
            return CrawlWrite(
                feed_id=feed_id, url=feed.url, at=at, outcome="ok", politeness_key=feed.url,
                feed_changes={"status": "ok", "last_success_at": at},
                entries=[w.entry(title, published=at)],
            )

        conn_a = w.store.engine.connect()
        tx_a = conn_a.begin()
        [written_a] = write_batch(conn_a, [write(f, "from f")])
        committed: list[bool] = []

        def commit_a_first(_conn, _cursor, statement, _params, _context, _many):  # type: ignore[no-untyped-def]
            if statement.lstrip().upper().startswith("INSERT INTO NOTIFY_OUTBOX") and not committed:
                tx_a.commit()
                committed.append(True)

        sa.event.listen(second.engine, "before_cursor_execute", commit_a_first)
        try:
            [written_b] = second.write([write(g, "from g")])
        finally:
            sa.event.remove(second.engine, "before_cursor_execute", commit_a_first)
            conn_a.close()
        assert committed == [True]  # the race happened
        assert (written_a.new_entries, written_b.new_entries) == (1, 1)
        issues = [r for r in w.outbox() if r["kind"] == "digest"]
        assert len(issues) == 1  # one issue for the reader's day
        with w.store.engine.connect() as conn:
            held = conn.execute(
                sa.text("SELECT count(*) FROM notify_digest_items WHERE outbox_id = :o"),
                {"o": issues[0]["id"]},
            ).scalar_one()
        assert held == 2  # with both items
    finally:
        second.close()
        w.store.close()
