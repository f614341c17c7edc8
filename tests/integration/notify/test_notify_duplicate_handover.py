"""The notifier's pass moves the readers of a duplicate feed the crawl did not move (recorded
before ``feeds.duplicate_of`` existed: the migration links them from ``last_error``), hands the
ended subscription's queued mails to the one the reader keeps without sending an item twice,
and carries the sponsor over. SQLite and PostgreSQL, real SMTP server."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

import sqlalchemy as sa

from fairfetch.notify.service import send_due
from fairfetch.store import CrawlWrite
from fairfetch.store import notify_repo as repo
from fairfetch.store.tables import feeds
from fairfetch.store.tables_notify import notify_sponsorships, notify_subscriptions

from .conftest import FAST, T0, SmtpServer, _world


async def test_notify_duplicate_pass_hands_over_queued_mails_once_each(
    db_url: str, smtp_server: SmtpServer
) -> None:
    w = _world(db_url, smtp_server.url)
    try:
        a = w.add_feed("https://old.example.test/feed.xml")
        b = w.add_feed("https://new.example.test/feed.xml")
        w.subscribe("bob@example.test", a)
        w.subscribe("bob@example.test", b)
        w.subscribe("ana@example.test", a, mode="daily", hour=9)
        repo.grant(w.store, "Old Media", 10, T0, feed_ids=[a])
        at = T0 + timedelta(hours=1)
        both = w.entry("both", published=at, eid="urn:both")
        w.write(a, [both, w.entry("only-a", published=at)], at=at)
        w.write(b, [w.entry("both", published=at, eid="urn:both")], at=at)
        with w.store.engine.begin() as conn:  # recorded by the crawl: A duplicates B
            conn.execute(feeds.update().where(feeds.c.id == a).values(
                status="dead", duplicate_of=b))
        report = await send_due(w.store, w.settings, now=at + timedelta(days=1), options=FAST)
        assert report.failed == 0
        got = Counter((m.rcpt, str(m.msg["Subject"])) for m in smtp_server.accepted)
        bob = Counter(s.rsplit("] ", 1)[-1] for r, s in got if r == "bob@example.test")
        assert bob == Counter({"both": 1, "only-a": 1}), got
        ana = [s for r, s in got if r == "ana@example.test"]
        assert len(ana) == 1  # her digest, moved with its schedule
        with w.store.engine.connect() as conn:
            subs = conn.execute(sa.select(notify_subscriptions.c.feed_id,
                                          notify_subscriptions.c.status,
                                          notify_subscriptions.c.mode,
                                          notify_subscriptions.c.hour)
                                .order_by(notify_subscriptions.c.id)).all()
            sponsored = conn.execute(sa.select(notify_sponsorships.c.feed_id)).scalars().all()
        assert [tuple(s) for s in subs] == [
            (a, "unsubscribed", "realtime", 8),  # bob's duplicate one: ended, kept on record
            (b, "active", "realtime", 8),
            (b, "active", "daily", 9),  # ana's, moved as it was
        ]
        assert sorted(sponsored) == sorted([a, b])
        cancelled = [r for r in w.outbox() if r["status"] == "cancelled" and r["kind"] == "item"]
        # bob's two mails queued through A: "both" is queued through B already, and "only-a"
        # was carried to B (B's readers are told of it there), so each goes once, through B
        assert [("duplicate feed" in (r["last_error"] or "")) for r in cancelled] == [True, True]
    finally:
        w.store.close()



async def test_notify_duplicate_mark_and_the_item_in_one_write_send_it_once(
    db_url: str, smtp_server: SmtpServer
) -> None:
    """The duplicate told its readers of an item; the crawl's next write holds both the
    duplicate mark and the other feed's first read of that item (one batch, one transaction):
    the readers moved are not told again, the other feed's own reader is told once."""
    w = _world(db_url, smtp_server.url)
    try:
        a = w.add_feed("https://old.example.test/feed.xml")
        b = w.add_feed("https://new.example.test/feed.xml")
        w.subscribe("ana@example.test", a)
        w.subscribe("bob@example.test", a)
        w.subscribe("bob@example.test", b)
        w.subscribe("cy@example.test", b)
        w.subscribe("dee@example.test", a, mode="daily", hour=6)
        at = T0 + timedelta(hours=1)
        w.write(a, [w.entry("race", published=at, eid="urn:race")], at=at)
        later = at + timedelta(hours=1)
        w.store.write([
            CrawlWrite(feed_id=a, url="https://old.example.test/feed.xml", at=later,
                       outcome="error", politeness_key="k", error_kind="duplicate",
                       feed_changes={"status": "dead", "duplicate_of": b}),
            CrawlWrite(feed_id=b, url="https://new.example.test/feed.xml", at=later,
                       outcome="ok", politeness_key="k",
                       feed_changes={"status": "ok", "last_success_at": later},
                       entries=[w.entry("race", published=at, eid="urn:race"),
                                w.entry("fresh", published=later)]),
        ], w.settings)
        await send_due(w.store, w.settings, now=later + timedelta(days=1), options=FAST)
        got = Counter((m.rcpt, str(m.msg["Subject"]).rsplit("] ", 1)[-1])
                      for m in smtp_server.accepted if m.rcpt != "dee@example.test")
        assert got == Counter({
            ("ana@example.test", "race"): 1, ("ana@example.test", "fresh"): 1,
            ("bob@example.test", "race"): 1, ("bob@example.test", "fresh"): 1,
            ("cy@example.test", "race"): 1, ("cy@example.test", "fresh"): 1,
        }), got
        digest = "".join(str(m.msg.get_body(("plain",)).get_content())
                         for m in smtp_server.accepted if m.rcpt == "dee@example.test")
        assert digest.count("* race (") == 1, digest
        assert digest.count("* fresh (") == 1, digest
    finally:
        w.store.close()
