"""A store created by every earlier fairfetch, holding real data, upgraded by this one.

A store "at level N" is what the fairfetch that shipped migrations 0001 … N left behind: every
one of them applied, built forward from an empty database (not reached by downgrading today's
schema), and filled with the rows that fairfetch wrote, through the columns it had: feeds with
health state and every kind of value (JSON lists, floats, non-ASCII text, times), entries,
authors and their links, contacts, redirect hops, crawls, an outage, WebSub subscriptions with
a queued push (binary body) and pings, notify readers, subscriptions, an outbox of every state
with digest items, a sponsorship and its ledger, the sink, and robots.txt copies.

Opened by this fairfetch (migrations apply on open), every row and value must be there as it
was (the only changes are those a migration documents: 0006 closes the digests marked by an
empty subject, 0007 links duplicates named in last_error), the constraints must hold, the
schema must be the one a new store gets, and the store must work: read, search, write.
On SQLite and PostgreSQL.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.script import ScriptDirectory

from fairfetch.feeds.model import Entry
from fairfetch.store import CrawlWrite, open_store
from fairfetch.store.directory_repo import search_feeds
from fairfetch.store.engine import create_engine
from fairfetch.store.migrate import _config, is_current
from fairfetch.store.schema import metadata

#: SQLite's reflection cannot read the expression indexes (lower(title)): compared in
#: sqlite_master instead, see _schema.
pytestmark = pytest.mark.filterwarnings("ignore:Skipped unsupported reflection")

T0 = datetime(2026, 6, 1, 8, 30, 15, 250000, tzinfo=UTC)


def _t(hours: float) -> datetime:
    return T0 + timedelta(hours=hours)


#: In the order fairfetch shipped them (their numbers); the graph branches from 0001_core.
LEVELS = sorted(s.revision for s in ScriptDirectory.from_config(_config()).walk_revisions())

DUPLICATE_ERROR = ("duplicate: moved permanently to https://a.example/feed, which feed #1 "
                   "already crawls; this one is no longer fetched")

#: (table, rows) in insertion order; ids are what the database assigns in that order.
ROWS: list[tuple[str, list[dict[str, Any]]]] = [
    ("feeds", [
        {"id": 1, "url": "https://a.example/feed", "original_url": "a.example/feed",
         "title": "Café ☕ «Nouvelles» 日本", "link": "https://a.example/",
         "description": "Line one\nline two\ttab", "language": "fr", "image_url": None,
         "generator": "Ghost 5.0", "format": "rss20", "kind": "podcast",
         "kind_evidence": ["itunes:type episodic", "audio enclosures (2)"],
         "categories": ["News", "Technology"], "backend": "ghost",
         "politeness_key": "a.example", "status": "ok", "error_count": 0,
         "last_error": "http: HTTP 500", "last_success_at": _t(1), "last_fetched_at": _t(1),
         "next_crawl_at": _t(2.5), "added_at": T0, "etag": 'W/"abc-123"',
         "last_modified": "Mon, 01 Jun 2026 08:00:00 GMT", "interval_seconds": 5400.5,
         "redirect_candidate": "https://new.a.example/feed", "redirect_candidate_count": 1,
         "hub_urls": ["https://hub.example/"], "self_url": "https://a.example/feed",
         "entry_count": 2, "newest_entry_at": _t(0.5), "crawl_count": 3},
        {"id": 2, "url": "https://b.example/rss", "original_url": "https://b.example/rss",
         "title": "Bee", "politeness_key": "b.example", "status": "error", "error_count": 3,
         "last_error": "timeout: no first byte in 20 s", "last_success_at": _t(-48),
         "last_fetched_at": _t(1), "next_crawl_at": _t(5), "added_at": T0, "kind": "blog",
         "kind_evidence": [], "categories": [], "hub_urls": [], "entry_count": 1,
         "crawl_count": 4},
        {"id": 3, "url": "https://c.example/feed", "original_url": "https://c.example/feed",
         "politeness_key": "c.example", "status": "dead", "error_count": 1,
         "last_error": DUPLICATE_ERROR, "last_fetched_at": _t(1), "next_crawl_at": None,
         "duplicate_of": 1,
         "added_at": T0, "kind_evidence": [], "categories": [], "hub_urls": []},
        {"id": 4, "url": "https://d.example/gone", "original_url": "https://d.example/gone",
         "politeness_key": "d.example", "status": "dead", "error_count": 10,
         "last_error": "gone: HTTP 410", "last_fetched_at": _t(1), "next_crawl_at": None,
         "added_at": T0, "kind_evidence": [], "categories": [], "hub_urls": []},
        {"id": 5, "url": "https://e.example/new", "original_url": "https://e.example/new",
         "politeness_key": "e.example", "status": "new", "error_count": 0, "added_at": T0,
         "next_crawl_at": T0, "kind_evidence": [], "categories": [], "hub_urls": []},
    ]),
    ("entries", [
        {"id": 1, "feed_id": 1, "entry_id": "urn:uuid:1", "title": "Épisode 1",
         "link": "https://a.example/1", "published": _t(-24), "updated": _t(-23),
         "summary": "<p>One</p>", "content": "<p>One, in full — ✓</p>",
         "authors": [{"name": "Ada Lovelace", "email": "ada@a.example", "url": None}],
         "categories": ["News"],
         "enclosures": [{"url": "https://a.example/1.mp3", "type": "audio/mpeg",
                         "length": 12345678}],
         "image_url": "https://a.example/1.jpg", "content_hash": "sha1:aa",
         "first_seen_at": _t(-23), "last_seen_at": _t(1)},
        {"id": 2, "feed_id": 1, "entry_id": "urn:uuid:2", "title": "Episode 2",
         "published": _t(0.5), "authors": [], "categories": [], "enclosures": [],
         "content_hash": "sha1:bb", "first_seen_at": _t(1), "last_seen_at": _t(1)},
        {"id": 3, "feed_id": 2, "entry_id": "https://b.example/post", "title": "Post",
         "authors": [], "categories": ["tech"], "enclosures": [], "content_hash": "",
         "first_seen_at": _t(-48), "last_seen_at": _t(-48)},
    ]),
    ("crawls", [
        {"id": 1, "feed_id": 1, "url": "https://a.example/feed", "at": _t(1), "outcome": "ok",
         "http_status": 200, "bytes": 40960, "duration": 0.25, "politeness_key": "a.example",
         "new_entries": 1, "trigger": "poll"},
        {"id": 2, "feed_id": 2, "url": "https://b.example/rss", "at": _t(1),
         "outcome": "error", "error_kind": "timeout", "error_detail": "no first byte in 20 s",
         "bytes": 0, "duration": 20.0, "politeness_key": "b.example", "new_entries": 0,
         "trigger": "refresh"},
        {"id": 3, "feed_id": 2, "url": "https://b.example/rss", "at": _t(0.5),
         "outcome": "throttled", "http_status": 429, "bytes": 0, "duration": 0.1,
         "politeness_key": "b.example", "new_entries": 0, "trigger": "poll"},
    ]),
    ("redirects", [
        {"id": 1, "feed_id": 1, "hop": 0, "url": "http://a.example/feed", "status": 301,
         "location": "https://a.example/feed", "seen_at": _t(1)},
    ]),
    ("authors", [
        {"id": 1, "feed_id": 1, "name": "Ada Lovelace", "email": "ada@a.example", "url": "",
         "source": "itunes:owner"},
        {"id": 2, "feed_id": 2, "name": "Grace Hopper", "email": "", "url": "",
         "source": "dc:creator"},
    ]),
    ("feed_links", [
        {"id": 1, "feed_id": 1, "url": "mailto:ada@a.example", "network": "email",
         "source": "itunes:owner"},
        {"id": 2, "feed_id": 1, "url": "https://mastodon.example/@ada", "network": "mastodon",
         "source": "atom:author"},
    ]),
    ("author_links", [
        {"id": 1, "author_id": 1, "url": "https://ada.example/", "network": "web",
         "source": "atom:author"},
    ]),
    ("outages", [
        {"id": 1, "started_at": _t(-5), "ended_at": _t(-4.9), "keys": 23,
         "detail": "dns: 23 keys in a minute"},
    ]),
    ("websub_subscriptions", [
        {"id": 1, "feed_id": 1, "hub_url": "https://hub.example/",
         "topic_url": "https://a.example/feed", "callback_token": "tok-1",
         "secret": "s3cret", "state": "verified", "requested_lease": 86400,
         "lease_seconds": 43200, "verified_at": _t(0), "lease_expires_at": _t(12),
         "next_action_at": _t(10), "attempts": 0, "created_at": T0, "updated_at": _t(0)},
        {"id": 2, "feed_id": 2, "hub_url": "https://hub.example/",
         "topic_url": "https://b.example/rss", "callback_token": "tok-2", "secret": "x",
         "state": "denied", "attempts": 2, "last_error": "HTTP 500",
         "denied_reason": "topic not found", "created_at": T0, "updated_at": _t(0)},
    ]),
    ("websub_deliveries", [
        {"id": 1, "subscription_id": 1, "feed_id": 1, "received_at": _t(1.5),
         "body": b"<rss>\x00\xff\xfe not utf-8</rss>", "content_type": "application/rss+xml",
         "status": "queued", "attempts": 0},
    ]),
    ("websub_pings", [
        {"id": 1, "subscription_id": 1, "feed_id": 1, "at": _t(1.5), "outcome": "accepted",
         "http_status": 202, "detail": ""},
    ]),
    ("notify_readers", [
        {"id": 1, "email": "reader@r.example", "tz": "Europe/Paris", "created_at": T0,
         "hard_failures": 0, "token": "reader-tok-1"},
        {"id": 2, "email": "digest@r.example", "tz": "UTC", "created_at": T0,
         "hard_failures": 1, "flagged_at": None, "token": "reader-tok-2"},
    ]),
    ("notify_subscriptions", [
        {"id": 1, "reader_id": 1, "feed_id": 1, "mode": "realtime", "hour": 8, "weekday": 0,
         "only_categories": [], "except_categories": ["ads"], "status": "active",
         "confirm_token": "c-1", "manage_token": "m-1", "created_at": T0,
         "confirmed_at": _t(0.1)},
        {"id": 2, "reader_id": 2, "feed_id": 1, "mode": "daily", "hour": 7, "weekday": 0,
         "only_categories": ["News"], "except_categories": [], "status": "active",
         "confirm_token": "c-2", "manage_token": "m-2", "created_at": T0,
         "confirmed_at": _t(0.2)},
        {"id": 3, "reader_id": 2, "feed_id": 2, "mode": "weekly", "hour": 9, "weekday": 4,
         "only_categories": [], "except_categories": [], "status": "pending",
         "confirm_token": "c-3", "manage_token": "m-3", "created_at": T0},
        {"id": 4, "reader_id": 1, "feed_id": 3, "mode": "realtime", "hour": 8, "weekday": 0,
         "only_categories": [], "except_categories": [], "status": "unsubscribed",
         "confirm_token": "c-4", "manage_token": "m-4", "created_at": T0,
         "confirmed_at": _t(0.1), "unsubscribed_at": _t(0.9)},
    ]),
    ("notify_outbox", [
        {"id": 1, "dedupe_key": "rt:1:1", "kind": "item", "reader_id": 1,
         "subscription_id": 1, "entry_id": 1, "status": "sent", "created_at": _t(1),
         "due_at": _t(1), "attempts": 1, "message_id": "<1@fairfetch>",
         "subject": "Café ☕ «Nouvelles» 日本: Épisode 1", "sent_at": _t(1.01)},
        {"id": 2, "dedupe_key": "rt:1:2", "kind": "item", "reader_id": 1,
         "subscription_id": 1, "entry_id": 2, "status": "pending", "created_at": _t(1),
         "due_at": _t(1), "attempts": 2, "last_error": "smtp: 451 try later",
         "message_id": "<2@fairfetch>"},
        # A digest issue already closed: marked by an empty subject before 0006.
        {"id": 3, "dedupe_key": "digest:2:2026-06-01", "kind": "digest", "reader_id": 2,
         "subscription_id": 2, "schedule": "daily", "status": "pending",
         "created_at": _t(-1), "due_at": _t(-0.5), "attempts": 0,
         "message_id": "<3@fairfetch>", "subject": ""},
        # The next issue, still open.
        {"id": 4, "dedupe_key": "digest:2:2026-06-02", "kind": "digest", "reader_id": 2,
         "subscription_id": 2, "schedule": "daily", "status": "pending",
         "created_at": _t(1), "due_at": _t(22.5), "attempts": 0,
         "message_id": "<4@fairfetch>"},
        {"id": 5, "dedupe_key": "confirm:3", "kind": "confirm", "reader_id": 2,
         "subscription_id": 3, "status": "failed", "created_at": T0, "due_at": T0,
         "attempts": 5, "last_error": "smtp: 550 no such user", "message_id": "<5@fairfetch>",
         "subject": "Confirm"},
    ]),
    ("notify_digest_items", [
        {"id": 1, "outbox_id": 3, "subscription_id": 2, "entry_id": 1},
        {"id": 2, "outbox_id": 4, "subscription_id": 2, "entry_id": 2},
    ]),
    ("notify_publishers", [{"id": 1, "name": "A Media", "created_at": T0}]),
    ("notify_sponsorships", [{"feed_id": 1, "publisher_id": 1, "since": T0}]),
    ("notify_ledger", [
        {"id": 1, "at": T0, "kind": "credit", "publisher_id": 1, "amount": 1000,
         "note": "top-up"},
        {"id": 2, "at": _t(1.01), "kind": "charge", "publisher_id": 1, "reader_id": 1,
         "amount": -1, "outbox_id": 1, "charge_key": "charge:1", "note": ""},
    ]),
    ("notify_sink", [
        {"id": 1, "received_at": _t(1.01), "mail_from": "fairfetch@f.example",
         "rcpt_to": "reader@r.example", "subject": "Épisode 1", "message_id": "<1@fairfetch>",
         "raw": "Subject: =?utf-8?q?=C3=89pisode_1?=\r\n\r\nbody"},
    ]),
    ("robots_txt", [
        {"origin": "https://a.example", "state": "ok", "status": 200,
         "body": "User-agent: *\nDisallow: /private\nCrawl-delay: 2", "fetched_at": _t(0.5)},
        {"origin": "https://b.example", "state": "unreachable", "status": 503, "body": None,
         "fetched_at": _t(0.5)},
    ]),
]

TABLES = metadata.tables


def _pk(table: sa.Table) -> list[sa.Column[Any]]:
    return list(table.primary_key.columns)


def _build_at(url: str, level: str) -> dict[str, list[dict[str, Any]]]:
    """The store that the fairfetch shipping migrations up to ``level`` left: built forward,
    then filled through the columns that existed. Returns what was written, per table."""
    upto = LEVELS[: LEVELS.index(level) + 1]
    engine = create_engine(url)
    written: dict[str, list[dict[str, Any]]] = {}
    try:
        with engine.begin() as conn:
            for revision in upto:
                command.upgrade(_config(conn), revision)
        with engine.begin() as conn:
            existing = {name: {c["name"] for c in sa.inspect(conn).get_columns(name)}
                        for name in sa.inspect(conn).get_table_names()}
            for name, rows in ROWS:
                if name not in existing:
                    continue
                table = TABLES[name]
                for row in rows:
                    values = {k: v for k, v in row.items() if k in existing[name]}
                    if name == "notify_outbox" and "closed_at" in existing[name] \
                            and row.get("subject") == "":
                        # From 0006 on, a closed issue is written with its closing time.
                        values.update(subject=None, closed_at=row["created_at"])
                    auto = "id" in row  # as fairfetch inserts: the database numbers rows
                    if auto:
                        values.pop("id")
                    result = conn.execute(table.insert().values(**values))
                    if auto:
                        assert result.inserted_primary_key is not None
                        assert result.inserted_primary_key[0] == row["id"], (name, row)
                        values["id"] = row["id"]
                    written.setdefault(name, []).append(values)
    finally:
        engine.dispose()
    return written


def _read(url: str, written: dict[str, list[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    """The rows of ``written``'s tables, in key order, each through the columns written."""
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            found: dict[str, list[dict[str, Any]]] = {}
            for name, rows in written.items():
                table = TABLES[name]
                cols = sorted({k for row in rows for k in row})
                stored = [dict(r) for r in conn.execute(
                    sa.select(*(table.c[k] for k in cols)).order_by(*_pk(table))).mappings()]
                assert len(stored) == len(rows), (name, stored)
                found[name] = [{k: s[k] for k in row} for s, row in zip(stored, rows,
                                                                         strict=True)]
            return found
    finally:
        engine.dispose()


def _schema(url: str) -> dict[str, Any]:
    """What a store's schema is made of (columns, indexes, keys, triggers), comparable
    between two stores of one backend."""
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            insp = sa.inspect(conn)
            shape: dict[str, Any] = {}
            for name in sorted(insp.get_table_names()):
                if name.startswith("feeds_fts_"):
                    continue
                shape[name] = {
                    "columns": sorted((c["name"], str(c["type"]), c["nullable"])
                                      for c in insp.get_columns(name)),
                    "indexes": sorted((i["name"] or "", tuple(str(c) for c in i["column_names"]),
                                       bool(i["unique"])) for i in insp.get_indexes(name)),
                    "unique": sorted(tuple(u["column_names"])
                                     for u in insp.get_unique_constraints(name)),
                    "fks": sorted((tuple(f["constrained_columns"]), f["referred_table"],
                                   str(f["options"].get("ondelete")))
                                  for f in insp.get_foreign_keys(name)),
                    "pk": insp.get_pk_constraint(name)["constrained_columns"],
                }
            if conn.dialect.name == "sqlite":
                shape["sqlite_objects"] = sorted(conn.exec_driver_sql(
                    "SELECT type, name, tbl_name, sql FROM sqlite_master "
                    "WHERE type IN ('trigger', 'index') AND sql IS NOT NULL").all())
            else:
                shape["pg_indexes"] = sorted(conn.exec_driver_sql(
                    "SELECT indexname, indexdef FROM pg_indexes "
                    "WHERE schemaname = 'public'").all())
            return shape
    finally:
        engine.dispose()


def _constraints_hold(url: str) -> None:
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            if conn.dialect.name == "sqlite":
                assert conn.exec_driver_sql("PRAGMA foreign_key_check").all() == []
                assert conn.exec_driver_sql("PRAGMA integrity_check").scalar() == "ok"
                # The search index agrees with the rows it indexes.
                conn.exec_driver_sql(
                    "INSERT INTO feeds_fts(feeds_fts) VALUES ('integrity-check')")
                assert conn.exec_driver_sql("SELECT count(*) FROM feeds_fts").scalar() == \
                    conn.exec_driver_sql("SELECT count(*) FROM feeds").scalar()
            else:
                assert conn.exec_driver_sql(
                    "SELECT conname FROM pg_constraint WHERE NOT convalidated").all() == []
                assert conn.exec_driver_sql(
                    "SELECT indexrelid::regclass::text FROM pg_index "
                    "WHERE NOT indisvalid").all() == []
    finally:
        engine.dispose()


def _fresh_url(url: str, tmp_path: Any, request: pytest.FixtureRequest) -> str:
    if url.startswith("sqlite"):
        return f"sqlite:///{tmp_path}/fresh.db"
    import os
    import uuid

    base = os.environ["FAIRFETCH_TEST_PG"]
    name = "t_fresh_" + uuid.uuid4().hex[:10]
    admin = sa.create_engine(base, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))

    def _drop() -> None:
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()

    request.addfinalizer(_drop)
    return base.rsplit("/", 1)[0] + "/" + name


@pytest.mark.parametrize("level", LEVELS)
def test_migrations_levels_store_of_every_earlier_fairfetch_keeps_every_value(
    db_url: str, level: str, tmp_path: Any, request: pytest.FixtureRequest
) -> None:
    written = _build_at(db_url, level)
    assert written["feeds"]
    assert written["entries"]
    assert _read(db_url, written) == written  # the build itself stores what it was given

    store = open_store(db_url)  # this fairfetch, started on the old store
    try:
        assert is_current(store.engine)
        after = _read(db_url, written)
        expected = {name: [dict(r) for r in rows] for name, rows in written.items()}
        if "notify_outbox" in expected and "closed_at" not in expected["notify_outbox"][0]:
            # 0006: the digest closed before the column existed (empty subject) is closed
            # at its creation time, and its subject is its own again (none yet).
            for row in expected["notify_outbox"]:
                if row["status"] == "pending" and row.get("subject") == "":
                    row["subject"] = None
        assert after == expected

        with store.engine.connect() as conn:
            dup = dict(conn.execute(sa.select(TABLES["feeds"].c.id,
                                              TABLES["feeds"].c.duplicate_of)).all())
            if "notify_outbox" in written:
                closed = dict(conn.execute(sa.select(
                    TABLES["notify_outbox"].c.id, TABLES["notify_outbox"].c.closed_at)).all())
                assert closed == {1: None, 2: None, 3: _t(-1), 4: None, 5: None}
        # 0007: the duplicate named in last_error is linked, and nothing else.
        assert dup == {1: None, 2: None, 3: 1, 4: None, 5: None}

        # The store works on what it found: read, search, write.
        a = store.get_feed("a.example/feed")
        assert (a.id, a.status, a.error_count, a.last_error, a.etag, a.last_success_at) == (
            1, "ok", 0, "http: HTTP 500", 'W/"abc-123"', _t(1))
        assert [f["id"] for f in search_feeds(store, "Lovelace").rows] == [1]
        assert [f["id"] for f in search_feeds(store, "Café").rows] == [1]
        assert [f["id"] for f in search_feeds(store, "Hopper").rows] == [2]
        f, created = store.add_feed("https://f.example/feed", now=_t(3),
                                    politeness_key="f.example")
        assert created
        assert f.id == 6
        store.write([CrawlWrite(
            feed_id=2, url="https://b.example/rss", at=_t(3), outcome="ok",
            politeness_key="b.example", http_status=200, bytes=100, duration=0.1,
            feed_changes={"status": "ok", "error_count": 0, "last_success_at": _t(3),
                          "last_fetched_at": _t(3), "next_crawl_at": _t(4)},
            entries=[Entry(id="https://b.example/post2", title="Post 2")],
        )])
        assert sorted(e["entry_id"] for e in store.entries_of(2)) == [
            "https://b.example/post", "https://b.example/post2"]
    finally:
        store.close()

    _constraints_hold(db_url)
    fresh = open_store(_fresh_url(db_url, tmp_path, request))
    fresh.close()
    assert _schema(db_url) == _schema(str(fresh.engine.url.render_as_string(
        hide_password=False)))
