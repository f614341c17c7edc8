"""What becomes a notification: written by the crawler's own transaction (SqlStore.write), on
SQLite and PostgreSQL."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

import sqlalchemy as sa

from fairfetch.store import notify_repo as repo
from fairfetch.store.tables_notify import notify_digest_items, notify_outbox

from .conftest import T0


def _items(w):
    return [r for r in w.outbox() if r["kind"] == "item"]


def _digest_entries(w):
    with w.store.engine.connect() as conn:
        return sorted(
            r.entry_id for r in conn.execute(sa.select(notify_digest_items.c.entry_id))
        )


def test_notify_first_crawl_backlog_notifies_nobody(any_world):
    w = any_world
    fid = w.add_feed("https://a.example.test/feed", backlog=0)
    w.subscribe("ana@example.test", fid)
    # the feed's first successful crawl: a backlog of 5, stored, nobody notified
    assert w.write(fid, [w.entry(f"old {i}") for i in range(5)], at=T0 + timedelta(minutes=1),
                   first_crawl=True) == 5
    assert _items(w) == []
    # the next crawl's new entry is news
    w.write(fid, [w.entry("fresh")], at=T0 + timedelta(hours=1))
    assert len(_items(w)) == 1


def test_notify_nothing_before_confirmation_and_only_after(any_world):
    w = any_world
    fid = w.add_feed("https://a.example.test/feed")
    res = repo.subscribe(w.store, "bob@example.test", fid, mode="realtime", hour=8, weekday=0,
                         tz="UTC", only=(), exclude=(), now=T0)
    w.write(fid, [w.entry("before confirming")], at=T0 + timedelta(minutes=5))
    assert _items(w) == []  # pending subscription: nothing but the confirmation mail
    assert [r["kind"] for r in w.outbox()] == ["confirm"]
    repo.confirm(w.store, res.subscription["confirm_token"], T0 + timedelta(minutes=10))
    w.write(fid, [w.entry("after confirming")], at=T0 + timedelta(minutes=15))
    items = _items(w)
    assert len(items) == 1
    # the entry seen before confirmation is never sent, not even later
    w.write(fid, [w.entry("another")], at=T0 + timedelta(minutes=20))
    assert len(_items(w)) == 2


def test_notify_dedupe_across_polls_pings_and_url_changes(any_world):
    w = any_world
    fid = w.add_feed("https://a.example.test/feed")
    w.subscribe("ana@example.test", fid)
    e = w.entry("once", eid="http://www.site.example.test/post/1")
    w.write(fid, [e], at=T0 + timedelta(minutes=1))
    # the same entry in the next poll, and again in a ping-triggered crawl
    w.write(fid, [e], at=T0 + timedelta(minutes=2))
    w.write(fid, [e, e], at=T0 + timedelta(minutes=3))
    # the feed moved to https and dropped www.: the entry's id changed spelling, not identity
    moved = w.entry("once", eid="https://site.example.test/post/1/")
    w.write(fid, [moved], at=T0 + timedelta(minutes=4))
    # a genuinely new post right next to it is still news
    w.write(fid, [w.entry("twice", eid="https://site.example.test/post/2")],
            at=T0 + timedelta(minutes=5))
    assert len(_items(w)) == 2


def test_notify_republished_old_items_are_not_news(any_world):
    w = any_world
    fid = w.add_feed("https://a.example.test/feed")
    w.subscribe("ana@example.test", fid)
    now = T0 + timedelta(hours=1)
    w.write(fid, [
        w.entry("today", published=now - timedelta(hours=1)),
        w.entry("last year, republished", published=now - timedelta(days=365)),
        w.entry("a month behind the newest", published=now - timedelta(days=30)),
        w.entry("undated"),
    ], at=now)
    titles = sorted(r["entry_title"] for r in _items_with_titles(w))
    assert titles == ["today", "undated"]



def test_notify_a_future_dated_entry_does_not_silence_the_feed(any_world):
    """One entry dated a year ahead (an events feed, a typo in a CMS) makes the feed's newest
    entry a year ahead; measured from there, every real new item looked "republished" and was
    never mailed. The guard measures from now at the latest."""
    w = any_world
    fid = w.add_feed("https://a.example.test/feed")
    w.subscribe("ana@example.test", fid)
    now = T0 + timedelta(hours=1)
    w.write(fid, [w.entry("next year's gala", published=now + timedelta(days=365))], at=now)
    later = now + timedelta(days=1)
    w.write(fid, [
        w.entry("today's news", published=later - timedelta(hours=1)),
        # the other direction: still old, however far ahead the newest claims to be
        w.entry("ten days old, republished", published=later - timedelta(days=10)),
        w.entry("last year, republished", published=later - timedelta(days=365)),
    ], at=later)
    titles = sorted(r["entry_title"] for r in _items_with_titles(w))
    assert titles == ["next year's gala", "today's news"]


def test_notify_items_published_during_our_own_outage_are_news(any_world):
    """fairfetch itself was down for three weeks (a dead server, a lost cron): the feed went on
    publishing daily. On the first read after it, every item published since the last read is
    news. Measured from now, the age limit (14 days) and the republish guard (7 days behind the
    newest, which this very read moved to today) mailed only the last week's items and lost
    the rest; both now measure from the feed's previous read. An old item republished in the
    same read is still not news."""
    w = any_world
    fid = w.add_feed("https://a.example.test/feed")
    w.subscribe("ana@example.test", fid)
    before = T0 + timedelta(hours=1)
    w.write(fid, [w.entry("before the outage", published=before - timedelta(hours=1))],
            at=before)
    back = before + timedelta(days=21)
    daily = [w.entry(f"day {d:02d}", published=before + timedelta(days=d)) for d in range(1, 21)]
    w.write(fid, [*daily, w.entry("last year, republished",
                                  published=before - timedelta(days=365))], at=back)
    titles = sorted(r["entry_title"] for r in _items_with_titles(w))
    assert titles == ["before the outage", *[f"day {d:02d}" for d in range(1, 21)]]


def test_notify_newness_limits_come_from_the_writers_settings(any_world, monkeypatch):
    """A limit set in the config file (so in Settings, not in the environment) binds the outbox
    hook inside the crawl's transaction; without settings the hook keeps the defaults."""
    from dataclasses import replace

    monkeypatch.delenv("FAIRFETCH_NOTIFY_MAX_AGE_DAYS", raising=False)
    monkeypatch.delenv("FAIRFETCH_NOTIFY_BEHIND_NEWEST_DAYS", raising=False)
    w = any_world
    fid = w.add_feed("https://a.example.test/feed")
    w.subscribe("ana@example.test", fid)
    now = T0 + timedelta(hours=1)
    strict = replace(w.settings, notify_max_age_days=1.0)
    w.write(fid, [w.entry("three days old, strict", published=now - timedelta(days=3))],
            at=now, settings=strict)
    w.write(fid, [w.entry("three days old, defaults", published=now - timedelta(days=3))],
            at=now + timedelta(minutes=1))
    off = replace(w.settings, notify_max_age_days=None, notify_behind_newest_days=None)
    w.write(fid, [w.entry("last year, limits off", published=now - timedelta(days=365))],
            at=now + timedelta(minutes=2), settings=off)
    titles = sorted(r["entry_title"] for r in _items_with_titles(w))
    assert titles == ["last year, limits off", "three days old, defaults"]

def _items_with_titles(w):
    from fairfetch.store.tables import entries

    with w.store.engine.connect() as conn:
        return [
            dict(r)
            for r in conn.execute(
                sa.select(notify_outbox.c.id, entries.c.title.label("entry_title"))
                .join(entries, entries.c.id == notify_outbox.c.entry_id)
                .where(notify_outbox.c.kind == "item")
            ).mappings()
        ]


def test_notify_filters_apply_to_realtime_and_digests_alike(any_world):
    w = any_world
    fid = w.add_feed("https://a.example.test/feed")
    w.subscribe("only-rt@example.test", fid, only=("tech",))
    w.subscribe("except-rt@example.test", fid, exclude=("tech",))
    w.subscribe("only-dg@example.test", fid, mode="daily", only=("tech",))
    w.subscribe("except-dg@example.test", fid, mode="daily", exclude=("tech",))
    w.subscribe("all-dg@example.test", fid, mode="daily")
    tech = w.entry("tech post", categories=["Tech"])
    life = w.entry("life post", categories=["Life"])
    bare = w.entry("no categories")
    w.write(fid, [tech, life, bare], at=T0 + timedelta(minutes=1))
    by_reader = {}
    for r in w.outbox():
        by_reader.setdefault(r["email"], []).append(r)
    with w.store.engine.connect() as conn:
        rows = conn.execute(
            sa.text(
                "SELECT r.email, e.title FROM notify_digest_items d "
                "JOIN notify_subscriptions s ON s.id = d.subscription_id "
                "JOIN notify_readers r ON r.id = s.reader_id "
                "JOIN entries e ON e.id = d.entry_id"
            )
        ).all()
    digest = {}
    for email_addr, title in rows:
        digest.setdefault(email_addr, set()).add(title)
    realtime = {}
    for r in _items_with_titles_and_email(w):
        realtime.setdefault(r["email"], set()).add(r["entry_title"])
    # real-time, both directions
    assert realtime["only-rt@example.test"] == {"tech post"}
    assert realtime["except-rt@example.test"] == {"life post", "no categories"}
    # digests, both directions, exactly the same answer
    assert digest["only-dg@example.test"] == {"tech post"}
    assert digest["except-dg@example.test"] == {"life post", "no categories"}
    assert digest["all-dg@example.test"] == {"tech post", "life post", "no categories"}


def _items_with_titles_and_email(w):
    from fairfetch.store.tables import entries
    from fairfetch.store.tables_notify import notify_readers

    with w.store.engine.connect() as conn:
        return [
            dict(r)
            for r in conn.execute(
                sa.select(notify_readers.c.email, entries.c.title.label("entry_title"))
                .join(entries, entries.c.id == notify_outbox.c.entry_id)
                .join(notify_readers, notify_readers.c.id == notify_outbox.c.reader_id)
                .where(notify_outbox.c.kind == "item")
            ).mappings()
        ]


def test_notify_digest_issues_group_a_readers_feeds_by_schedule(any_world):
    w = any_world
    f1 = w.add_feed("https://a.example.test/feed")
    f2 = w.add_feed("https://b.example.test/feed")
    w.subscribe("ana@example.test", f1, mode="daily", hour=18, tz="Europe/Paris")
    w.subscribe("ana@example.test", f2, mode="daily", hour=18, tz="Europe/Paris")
    w.write(f1, [w.entry("one")], at=T0)
    w.write(f2, [w.entry("two")], at=T0 + timedelta(hours=2))
    digests = [r for r in w.outbox() if r["kind"] == "digest"]
    assert len(digests) == 1  # one issue for both feeds
    # 18:00 in Paris in March (before DST) is 17:00 UTC
    assert digests[0]["due_at"] == T0.replace(hour=17)
    assert len(_digest_entries(w)) == 2
    # after the issue time, a new entry goes to the next day's issue
    w.write(f1, [w.entry("three")], at=T0.replace(hour=17, minute=30))
    digests = [r for r in w.outbox() if r["kind"] == "digest"]
    assert [d["due_at"] for d in digests] == [T0.replace(hour=17), T0.replace(hour=17)
                                             + timedelta(days=1)]


def test_notify_unique_per_subscription_and_entry(any_world):
    w = any_world
    fid = w.add_feed("https://a.example.test/feed")
    sub = w.subscribe("ana@example.test", fid)
    w.write(fid, [w.entry("x")], at=T0 + timedelta(minutes=1))
    [item] = _items(w)
    # the hook run again for the same entry (a replayed write) adds nothing
    with w.store.engine.begin() as conn:
        eid = conn.execute(
            sa.select(notify_outbox.c.entry_id).where(notify_outbox.c.id == item["id"])
        ).scalar_one()
        repo.enqueue_new_entries(conn, fid, [eid], T0 + timedelta(minutes=2), False)
    assert len(_items(w)) == 1
    assert item["dedupe_key"] == f"item:{sub['id']}:{eid}"


def test_notify_import_subscriptions_is_idempotent_and_active(any_world):
    w = any_world
    fid = w.add_feed("https://a.example.test/feed")
    rows = [{"email": f"r{i}@example.test", "feed_id": fid, "mode": "daily", "hour": 6,
             "tz": "Asia/Tokyo"} for i in range(5)]
    assert repo.import_subscriptions(w.store, rows, T0) == 5
    assert repo.import_subscriptions(w.store, rows, T0) == 0
    subs = repo.list_subscriptions(w.store)
    assert {s["status"] for s in subs} == {"active"}
    assert {s["tz"] for s in subs} == {"Asia/Tokyo"}
    # imported readers get digests like anyone else; no confirmation mail was queued
    w.write(fid, [w.entry("x")], at=T0)
    kinds = Counter(r["kind"] for r in w.outbox())
    assert kinds == Counter({"digest": 5})


def _titles_in_send_order(w):
    """Item notifications in the order the sender takes them (due_outbox: by outbox id)."""
    with w.store.engine.connect() as conn:
        rows = conn.execute(
            sa.text(
                "SELECT e.title FROM notify_outbox o JOIN entries e ON e.id = o.entry_id"
                " WHERE o.kind = 'item' ORDER BY o.id"
            )
        ).all()
    return [r.title for r in rows]


def test_notify_one_reads_new_items_go_out_oldest_first(any_world):
    """A feed lists its newest item first; a read that brings three new ones queued them in
    that order, so the reader's inbox (newest on top) showed the oldest of the three on top."""
    w = any_world
    fid = w.add_feed("https://a.example.test/feed")
    w.subscribe("ana@example.test", fid)
    at = T0 + timedelta(hours=1)
    w.write(fid, [
        w.entry("third", published=at - timedelta(minutes=10)),
        w.entry("second", published=at - timedelta(minutes=20)),
        w.entry("first", published=at - timedelta(minutes=30)),
    ], at=at)  # fmt: skip
    assert _titles_in_send_order(w) == ["first", "second", "third"]


def test_notify_undated_new_items_go_out_in_reverse_feed_order(any_world):
    """Without dates the feed's own order is the only clue: newest first, so sent reversed."""
    w = any_world
    fid = w.add_feed("https://a.example.test/feed")
    w.subscribe("ana@example.test", fid)
    w.write(fid, [w.entry("third"), w.entry("second"), w.entry("first")],
            at=T0 + timedelta(hours=1))
    assert _titles_in_send_order(w) == ["first", "second", "third"]


def test_notify_a_feed_listing_oldest_first_is_still_sent_oldest_first(any_world):
    """Some feeds list oldest first: the dates, where every item has one, decide."""
    w = any_world
    fid = w.add_feed("https://a.example.test/feed")
    w.subscribe("ana@example.test", fid)
    at = T0 + timedelta(hours=1)
    w.write(fid, [
        w.entry("first", published=at - timedelta(minutes=30)),
        w.entry("second", published=at - timedelta(minutes=20)),
        w.entry("third", published=at - timedelta(minutes=10)),
    ], at=at)  # fmt: skip
    assert _titles_in_send_order(w) == ["first", "second", "third"]
