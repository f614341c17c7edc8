"""A feed that turns out to be a duplicate (its confirmed permanent redirect lands on a feed the
directory already crawls) is no longer crawled; its readers must follow it to that feed.

Before: the duplicate was marked dead and its subscribers silently got nothing new until an
operator moved them. Now the crawl transaction that records the duplicate (``feeds.duplicate_of``)
moves them: same mode, schedule, filters; a reader already on the other feed keeps that one and
the duplicate subscription is ended (recorded). Mails already queued still go, and no item
reaches a reader twice. Real crawler, real loopback HTTP server, real SMTP server (aiosmtpd),
SQLite and PostgreSQL.
"""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import sqlalchemy as sa
from aiohttp import web

from fairfetch.config import Settings
from fairfetch.crawl import Crawler
from fairfetch.net.politeness import politeness_key
from fairfetch.notify.service import send_due
from fairfetch.notify.subscriptions import SubscriptionRequest, request_subscription
from fairfetch.store import SqlStore, open_store
from fairfetch.store import notify_repo as repo
from fairfetch.store.tables import feeds
from fairfetch.store.tables_notify import notify_subscriptions
from fairfetch.testing import loopback_server

from .conftest import FAST, SmtpServer, World

START = datetime(2026, 11, 2, 12, 0, tzinfo=UTC)
STEP = timedelta(days=1, hours=1)  # past any interval: every live feed is due again


def _rss(title: str, items: list[tuple[str, datetime]]) -> bytes:
    body = "".join(
        f"<item><title>{t}</title><guid isPermaLink='false'>{title}-{t}</guid>"
        f"<link>http://site.test/{t}</link><category>news</category><pubDate>{format_datetime(p)}</pubDate></item>"
        for t, p in items
    )
    return (
        f'<?xml version="1.0"?><rss version="2.0"><channel><title>{title}</title>'
        f"<link>http://site.test/</link><description>d</description>{body}</channel></rss>"
    ).encode()


class Site:
    """/old.xml is feed A until it moves (301 to /new.xml); /new.xml is feed B."""

    def __init__(self) -> None:
        old = START - timedelta(days=30)  # backlog: not news whoever reads it first
        self.old_items = [("a-backlog", old)]
        self.new_items = [("b-backlog", old)]
        self.moved = False

    async def handle(self, request: web.Request) -> web.StreamResponse:
        if request.path == "/robots.txt":
            return web.Response(status=404)
        if request.path == "/old.xml":
            if self.moved:
                raise web.HTTPMovedPermanently(location="/new.xml")
            return web.Response(body=_rss("Old", self.old_items),
                                content_type="application/rss+xml")
        if request.path == "/new.xml":
            return web.Response(body=_rss("New", self.new_items),
                                content_type="application/rss+xml")
        return web.Response(status=404)


def _settings(store_url: str, smtp: SmtpServer) -> Settings:
    return Settings(
        db=store_url,
        allow_networks=("127.0.0.1/32",),
        resolve=("*.test:127.0.0.1",),
        connect_timeout=5.0,
        first_byte_timeout=5.0,
        total_timeout=10.0,
        smtp_url=smtp.url,
        public_url="https://news.example.test",
        mail_from="fairfetch <mail@news.example.test>",
    )


def _mails(smtp: SmtpServer) -> Counter[tuple[str, str]]:
    """(recipient, item title) of every accepted item mail."""
    got: Counter[tuple[str, str]] = Counter()
    for m in smtp.accepted:
        subject = str(m.msg["Subject"])
        got[(m.rcpt, subject.rsplit("] ", 1)[-1])] += 1
    return got


def _subs(store: Any) -> list[dict[str, Any]]:
    with store.engine.connect() as conn:
        return [dict(r) for r in conn.execute(
            sa.select(notify_subscriptions).order_by(notify_subscriptions.c.id)).mappings()]


async def test_notify_duplicate_readers_follow_the_feed_and_get_each_item_once(
    db_url: str, smtp_server: SmtpServer
) -> None:
    site = Site()
    store = open_store(db_url)
    now = [START]
    async with loopback_server(site.handle) as port:
        settings = _settings(store.url, smtp_server)
        w = World(store, settings)
        a, b = add_old_and_new(store, port, now[0])
        w.subscribe("ana@example.test", a.id, at=now[0], mode="realtime", only=("news",))
        ana_before = next(s for s in _subs(store) if s["feed_id"] == a.id)
        w.subscribe("bob@example.test", a.id, at=now[0])
        w.subscribe("bob@example.test", b.id, at=now[0])
        w.subscribe("cy@example.test", b.id, at=now[0])
        async with Crawler(store, settings, clock=lambda: now[0]) as crawler:
            await crawler.crawl_due()  # first crawls: backlogs, nobody notified
            now[0] += STEP
            # A gains an item while it still lives at its old address: queued for A's readers
            site.old_items.append(("a-late", now[0] - timedelta(hours=1)))
            await crawler.crawl_due()
            queued = [r for r in w.outbox() if r["kind"] == "item"]
            assert len(queued) == 2  # ana's and bob's
            site.moved = True
            for _ in range(2):  # the redirect is seen, then confirmed: A is B's duplicate
                now[0] += STEP
                await crawler.crawl_due()
            assert store.get_feed(a.id).status == "dead"
            with store.engine.connect() as conn:
                dup = conn.execute(
                    sa.select(feeds.c.duplicate_of).where(feeds.c.id == a.id)).scalar()
            assert dup == b.id
            # B gains an item after the move: every reader of A or B gets it once
            now[0] += STEP
            site.new_items.append(("b-fresh", now[0] - timedelta(hours=1)))
            await crawler.crawl_due()
        report = await send_due(store, settings, now=now[0], options=FAST)
    assert report.failed == 0
    got = _mails(smtp_server)
    assert got == Counter({
        ("bob@example.test", "a-late"): 1,
        ("bob@example.test", "b-fresh"): 1,
        ("cy@example.test", "b-fresh"): 1,
        ("ana@example.test", "a-late"): 1,
        ("ana@example.test", "b-fresh"): 1,
    }), got
    subs = {(s["reader_id"], s["feed_id"]): s for s in _subs(store)}
    ana = subs[(ana_before["reader_id"], b.id)]
    # ana's subscription moved as it was: same id, mode, filters, confirmation
    assert ana["id"] == ana_before["id"]
    assert (ana["status"], ana["mode"], ana["only_categories"]) == ("active", "realtime", ["news"])
    assert ana["confirmed_at"] == ana_before["confirmed_at"]
    # bob keeps his subscription on B; the one on A is ended, not deleted
    bob_rows = [s for s in _subs(store) if s["reader_id"] != ana["reader_id"]
                and s["feed_id"] == a.id]
    assert [s["status"] for s in bob_rows] == ["unsubscribed"]
    assert repo.count_pending(store).get("pending", 0) == 0
    store.close()


async def test_notify_duplicate_subscribing_with_the_old_address_lands_on_the_feed(
    db_url: str, smtp_server: SmtpServer
) -> None:
    """`notify subscribe` with the duplicate's URL (found by that URL) subscribes to the feed
    it duplicates: on the dead one, nothing would ever be sent."""
    site = Site()
    site.moved = True
    store = open_store(db_url)
    now = [START]
    async with loopback_server(site.handle) as port:
        settings = _settings(store.url, smtp_server)
        a, b = add_old_and_new(store, port, now[0])
        old = a.url
        async with Crawler(store, settings, clock=lambda: now[0]) as crawler:
            for _ in range(2):
                await crawler.crawl_due()
                now[0] += STEP
        assert store.get_feed(a.id).status == "dead"
        req = SubscriptionRequest.build("dan@example.test")
        done = request_subscription(store, req, old, now=now[0])
        assert done.subscription["feed_id"] == b.id
        repo.confirm(store, done.subscription["confirm_token"], now[0])
        async with Crawler(store, settings, clock=lambda: now[0]) as crawler:
            now[0] += STEP
            site.new_items.append(("b-fresh", now[0] - timedelta(hours=1)))
            await crawler.crawl_due()
        await send_due(store, settings, now=now[0], options=FAST)
    got = _mails(smtp_server)
    assert got[("dan@example.test", "b-fresh")] == 1
    store.close()


async def test_notify_duplicate_an_item_read_first_through_the_duplicate_is_mailed_once(
    db_url: str, smtp_server: SmtpServer
) -> None:
    """The duplicate reads the shared URL before the other feed does (its turn in the round
    came first) and its readers are told of an item; the other feed reads it after the move,
    in the same write as the duplicate mark or in a later crawl: nobody gets it twice, and the
    other feed's own reader gets it once."""
    site = Site()
    store = open_store(db_url)
    now = [START]
    async with loopback_server(site.handle) as port:
        settings = _settings(store.url, smtp_server)
        w = World(store, settings)
        a, b = add_old_and_new(store, port, now[0])
        w.subscribe("ana@example.test", a.id, at=now[0])
        w.subscribe("bob@example.test", a.id, at=now[0])
        w.subscribe("bob@example.test", b.id, at=now[0])
        w.subscribe("cy@example.test", b.id, at=now[0])
        w.subscribe("dee@example.test", a.id, at=now[0], mode="daily", hour=6)
        async with Crawler(store, settings, clock=lambda: now[0]) as crawler:
            await crawler.crawl_due()  # backlogs
            site.moved = True
            now[0] += STEP
            site.new_items.append(("race-1", now[0] - timedelta(hours=1)))
            await crawler.refresh([a.id])  # A alone reads race-1 (and sees the redirect)
            # ana, bob (through A), dee (digest) are told of race-1
            assert len([r for r in w.outbox() if r["kind"] == "item"]) == 2
            now[0] += STEP
            await crawler.crawl_due()  # A: duplicate, readers moved; B reads race-1 now
            assert store.get_feed(a.id).status == "dead"
            now[0] += STEP
            site.new_items.append(("race-2", now[0] - timedelta(hours=1)))
            await crawler.crawl_due()
        await send_due(store, settings, now=now[0] + timedelta(days=2), options=FAST)
    got = _mails(smtp_server)
    items = Counter({k: n for k, n in got.items() if k[1].startswith("race")})
    assert items == Counter({
        ("ana@example.test", "race-1"): 1, ("ana@example.test", "race-2"): 1,
        ("bob@example.test", "race-1"): 1, ("bob@example.test", "race-2"): 1,
        ("cy@example.test", "race-1"): 1, ("cy@example.test", "race-2"): 1,
    }), got
    digests = [m for m in smtp_server.accepted if m.rcpt == "dee@example.test"]
    bodies = "".join(str(m.msg.get_body(("plain",)).get_content()) for m in digests)
    assert bodies.count("* race-1 (") == 1, bodies
    assert bodies.count("* race-2 (") == 1, bodies
    store.close()


def add_old_and_new(store: SqlStore, port: int, at: datetime) -> tuple[Any, Any]:
    """Two feeds of one loopback site, ``/old.xml`` and ``/new.xml`` (the duplicate tests'
    pair: the old one's permanent redirect lands on the new one's URL)."""
    old = f"http://site.test:{port}/old.xml"
    new = f"http://site.test:{port}/new.xml"
    a, _ = store.add_feed(old, now=at, politeness_key=politeness_key(old))
    b, _ = store.add_feed(new, now=at, politeness_key=politeness_key(new))
    return a, b
