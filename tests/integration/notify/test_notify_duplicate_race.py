"""A notifier pass and a crawl moving the same duplicate feed's readers at the same instant
(PostgreSQL, READ COMMITTED). The duplicate was recorded without moving them (an older
fairfetch: the migration linked it), and the crawl records it again (its monthly probe) while
the pass moves them: the crawl's transaction has moved them and carried the item their reader
was told of to the other feed, not committed yet; the pass, reading the state before it, carried
the same item and waited on the crawl's uncommitted copy, then failed with a unique violation
once the crawl committed (``run`` logged it and retried the pass; a crawl committing between the
pass's reads could also have the pass end the subscription it had just moved).

Deterministic: the crawl's transaction is held open on one connection while the pass runs on
another, and committed only once the pass waits on it (``pg_blocking_pids``) or has finished."""

from __future__ import annotations

import threading
import time
from collections import Counter
from datetime import timedelta

import sqlalchemy as sa

from fairfetch.notify.service import send_due
from fairfetch.store import CrawlWrite
from fairfetch.store.batch_write import write_batch
from fairfetch.store.notify_subscriptions import move_duplicate_subscriptions
from fairfetch.store.tables import feeds
from fairfetch.store.tables_notify import notify_subscriptions

from .conftest import FAST, T0, SmtpServer, _world


async def test_notify_duplicate_pass_beside_a_crawl_moving_the_same_feed_does_not_fail(
    pg_url: str, smtp_server: SmtpServer
) -> None:
    w = _world(pg_url, smtp_server.url)
    try:
        a = w.add_feed("https://old.example.test/feed.xml")
        b = w.add_feed("https://new.example.test/feed.xml")
        w.subscribe("ana@example.test", a)
        w.subscribe("cy@example.test", b)
        at = T0 + timedelta(hours=1)
        w.write(a, [w.entry("told", published=at, eid="urn:told")], at=at)
        with w.store.engine.begin() as conn:  # recorded by an older fairfetch: not moved
            conn.execute(feeds.update().where(feeds.c.id == a).values(
                status="dead", duplicate_of=b))
        later = at + timedelta(days=30)
        probe = CrawlWrite(feed_id=a, url="https://old.example.test/feed.xml", at=later,
                           outcome="error", politeness_key="k", error_kind="duplicate",
                           feed_changes={"status": "dead", "duplicate_of": b})

        failures: list[BaseException] = []

        def notifier_pass() -> None:
            try:
                move_duplicate_subscriptions(w.store, later, w.settings)
            except BaseException as exc:  # surfaced by the assertion below
                failures.append(exc)

        watch = sa.create_engine(pg_url)
        try:
            with w.store.engine.connect() as crawl, watch.connect() as watcher:
                crawl_pid = crawl.exec_driver_sql("SELECT pg_backend_pid()").scalar_one()
                crawl.commit()
                tx = crawl.begin()
                write_batch(crawl, [probe], w.settings)  # moved and carried, not committed
                t = threading.Thread(target=notifier_pass)
                t.start()
                deadline = time.monotonic() + 60  # a hang guard, not a timed assertion
                while t.is_alive():
                    waiting = watcher.execute(
                        sa.text("SELECT count(*) FROM pg_stat_activity "
                                "WHERE :pid = ANY(pg_blocking_pids(pid))"),
                        {"pid": crawl_pid},
                    ).scalar_one()
                    watcher.commit()
                    if waiting:
                        break
                    assert time.monotonic() < deadline, "the pass neither waited nor finished"
                tx.commit()
                t.join(timeout=60)
                assert not t.is_alive()
        finally:
            watch.dispose()
        assert failures == []

        # and the move is right: ana follows the feed, told of the item once; cy once too
        with w.store.engine.connect() as conn:
            subs = conn.execute(sa.select(notify_subscriptions.c.feed_id,
                                          notify_subscriptions.c.status)
                                .order_by(notify_subscriptions.c.id)).all()
        assert [tuple(s) for s in subs] == [(b, "active"), (b, "active")]
        await send_due(w.store, w.settings, now=later + timedelta(hours=1), options=FAST)
        got = Counter((m.rcpt, str(m.msg["Subject"]).rsplit("] ", 1)[-1])
                      for m in smtp_server.accepted)
        assert got == Counter({("ana@example.test", "told"): 1,
                               ("cy@example.test", "told"): 1}), got
    finally:
        w.store.close()
