"""``feeds.duplicate_of``: the structured link from a feed recorded as a duplicate (its
confirmed permanent redirect landed on a URL another feed holds) to that feed. The crawler sets
it with the duplicate mark and empties it when a success revives the feed; ``feeds show --json``
shows it; the migration links the duplicates recorded before it (from their ``last_error``),
on SQLite and PostgreSQL. Before, the other feed was named only inside ``last_error``, so
nothing (notify's subscriptions above all) could follow it."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import sqlalchemy as sa
from aiohttp import web
from alembic import command
from typer.testing import CliRunner

from fairfetch.cli import app
from fairfetch.crawl import Crawler
from fairfetch.store import open_store
from fairfetch.store.engine import create_engine
from fairfetch.store.migrate import _config, upgrade
from fairfetch.store.tables import feeds
from fairfetch.testing import loopback_server

from .conftest import add_old_and_new, loopback_settings

RSS = b"""<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>
<link>http://site.test/</link><description>d</description>
<item><title>a</title><guid>a</guid><link>http://site.test/a</link></item>
</channel></rss>"""


def _duplicate_of(store_url: str, feed_id: int) -> object:
    engine = create_engine(store_url)
    try:
        with engine.connect() as conn:
            return conn.execute(
                sa.select(feeds.c.duplicate_of).where(feeds.c.id == feed_id)).scalar()
    finally:
        engine.dispose()


async def test_crawl_duplicate_link_is_set_with_the_mark_and_emptied_by_a_revival(
    tmp_path: Path,
) -> None:
    moved = [True]

    async def handle(request: web.Request) -> web.StreamResponse:
        if request.path == "/robots.txt":
            return web.Response(status=404)
        if request.path == "/old.xml" and moved[0]:
            raise web.HTTPMovedPermanently(location="/new.xml")
        return web.Response(body=RSS, content_type="application/rss+xml")

    store = open_store(f"sqlite:///{tmp_path}/link.db")
    now = [datetime(2026, 11, 30, 12, 0, tzinfo=UTC)]
    async with loopback_server(handle) as port:
        settings = loopback_settings(store.url)
        a, b = add_old_and_new(store, port, now[0])
        old, new = a.url, b.url
        async with Crawler(store, settings, clock=lambda: now[0]) as crawler:
            await crawler.crawl_due()
            assert _duplicate_of(store.url, a.id) is None  # a redirect seen once moves nothing
            now[0] += timedelta(days=1, hours=1)
            await crawler.crawl_due()
            assert store.get_feed(a.id).status == "dead"
            assert _duplicate_of(store.url, a.id) == b.id
            assert _duplicate_of(store.url, b.id) is None

            result = CliRunner().invoke(app, ["--db", store.url, "feeds", "show", old, "--json"])
            assert result.exit_code == 0, result.output
            assert json.loads(result.output)["duplicate_of"] == b.id
            result = CliRunner().invoke(app, ["--db", store.url, "feeds", "show", new, "--json"])
            assert json.loads(result.output)["duplicate_of"] is None

            moved[0] = False  # the redirect goes away: a refresh revives it
            now[0] += timedelta(hours=1)
            await crawler.refresh([a.id])
            assert store.get_feed(a.id).status == "ok"
            assert _duplicate_of(store.url, a.id) is None
    store.close()


def test_crawl_duplicate_migration_links_feeds_recorded_before_it(db_url: str) -> None:
    engine = create_engine(db_url)
    now = datetime(2026, 11, 30, 8, 0, tzinfo=UTC).isoformat()
    try:
        with engine.begin() as conn:  # every head but the new one
            command.upgrade(_config(conn), "heads")
            command.downgrade(_config(conn), "0004_directory")
        with engine.begin() as conn:
            for i, status, err in [
                (1, "ok", None),
                (2, "dead", "duplicate: moved permanently to https://x.test/f, which feed #1 "
                            "already crawls; no longer crawled on its own"),
                (3, "dead", "duplicate: moved permanently to https://x.test/g, which feed #99 "
                            "already crawls; no longer crawled on its own"),
                (4, "dead", "gone: 410"),
            ]:
                conn.execute(sa.text(
                    "INSERT INTO feeds (id, url, original_url, politeness_key, status, "
                    "error_count, last_error, added_at) VALUES (:i, :u, :u, 'k', :s, 1, :e, :t)"
                ), {"i": i, "u": f"https://x.test/{i}", "s": status, "e": err, "t": now})
        upgrade(engine)
        with engine.connect() as conn:
            rows = conn.execute(sa.text(
                "SELECT id, duplicate_of FROM feeds ORDER BY id")).all()
        # feed #99 does not exist (deleted since): no link rather than a broken one
        assert [tuple(r) for r in rows] == [(1, None), (2, 1), (3, None), (4, None)]
        with engine.begin() as conn:  # the other feed deleted: the link goes, not the feed
            conn.execute(sa.text("DELETE FROM feeds WHERE id = 1"))
        with engine.connect() as conn:
            assert conn.execute(sa.text(
                "SELECT duplicate_of FROM feeds WHERE id = 2")).scalar() is None
    finally:
        engine.dispose()
