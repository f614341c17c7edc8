"""The crawler end to end against the testbed: health, redirects, 304s, perimeter."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
import sqlalchemy as sa

from fairfetch.config import Settings
from fairfetch.crawl import Crawler
from fairfetch.net.politeness import politeness_key
from fairfetch.store import SqlStore
from fairfetch.store.tables import crawls, entries
from fairfetch.testing import FeedSpec, Testbed


def add(store: SqlStore, specs: list[FeedSpec], now=None) -> None:  # type: ignore[no-untyped-def]
    from fairfetch.crawl import utcnow

    for s in specs:
        store.add_feed(s.url, now=now or utcnow(), politeness_key=politeness_key(s.url))


async def crawl(store: SqlStore, settings: Settings):  # type: ignore[no-untyped-def]
    async with Crawler(store, settings) as c:
        return await c.crawl_due()


async def refresh(store: SqlStore, settings: Settings, keys: list) -> None:  # type: ignore[type-arg]
    async with Crawler(store, settings) as c:
        await c.refresh(keys)


EDGE = [
    "redirect-301",
    "redirect-302",
    "redirect-chain",
    "redirect-loop",
    "redirect-long",
    "status-404",
    "status-410",
    "status-500",
    "status-503",
    "status-503-retry",
    "blocked-403",
    # slow-drip and no-answer end as timeouts in test_servers_that_never_finish_are_timeouts
    # below, with caps of 1-2 s: here, under the generous caps a bomb needs, each waited the
    # whole 60 s (the suite's slowest test by 40 s).
    "gzip-bomb",
    "huge-body",
    "malformed",
    "mis-encoded",
    "entity-bomb",
    "html-page",
    "hint-ttl",
    "new-feed-url",
]


async def test_every_behaviour_ends_as_the_catalogue_says(
    testbed: Testbed, store: SqlStore, settings: Settings
) -> None:
    # Generous caps: under load a bomb or a big body must still end as too_large, not timeout.
    settings = settings.replace(first_byte_timeout=30.0, total_timeout=60.0)
    specs = testbed.catalog(behaviours=EDGE)
    specs = [s for s in specs if s.url.split("//")[1].split(".")[0].endswith("-0")]
    specs += testbed.catalog(n=5, behaviours=["blog"]) + testbed.catalog(
        n=3, behaviours=["podcast"]
    )
    add(store, specs)
    summary = await crawl(store, settings)
    assert summary.due == len(specs) == summary.accounted
    for spec in specs:
        feed = store.get_feed(spec.url)
        if spec.expect == "ok":
            assert feed.status == "ok", (spec.behaviour, feed.last_error)
            assert feed.error_count == 0
            assert feed.entry_count > 0 or spec.behaviour == "podcast-empty"
            if spec.kind:
                assert feed.kind == spec.kind, (spec.behaviour, feed.kind_evidence)
        elif spec.expect == "throttled":
            assert feed.status == "new"
            assert feed.error_count == 0
            assert feed.last_fetched_at is None
        else:
            assert feed.status in ("error", "dead"), spec.behaviour
            assert feed.last_error, spec.behaviour
            assert feed.last_error.split(":")[0] == spec.expect, (spec.behaviour, feed.last_error)
    assert (
        store.get_feed(next(s.url for s in specs if s.behaviour == "status-410")).status == "dead"
    )


async def test_servers_that_never_finish_are_timeouts(
    testbed: Testbed, store: SqlStore, settings: Settings
) -> None:
    specs = testbed.catalog(n=1, behaviours=["slow-drip"]) + testbed.catalog(
        n=1, behaviours=["no-answer"]
    )
    add(store, specs)
    summary = await crawl(store, settings)  # caps of 1-2 s: these servers never finish
    assert summary.errors["timeout"] == 2
    for s in specs:
        feed = store.get_feed(s.url)
        assert feed.status == "error"
        assert feed.last_error.startswith("timeout")


async def test_second_crawl_is_a_304_and_writes_nothing_new(
    testbed: Testbed, store: SqlStore, settings: Settings
) -> None:
    specs = testbed.catalog(n=4, behaviours=["blog"])
    add(store, specs)
    first = await crawl(store, settings)
    assert first.counts["ok"] == 4
    entries_before = store.count_entries()
    store.set_due([store.get_feed(s.url).id for s in specs], store.get_feed(specs[0].url).added_at)
    second = await crawl(store, settings)
    assert second.counts["not_modified"] == 4
    assert store.count_entries() == entries_before
    stats = await testbed.stats()
    assert stats["total"]["conditional_hits"] >= 4
    for s in specs:
        assert store.get_feed(s.url).status == "ok"


async def test_growing_feed_gains_entries_without_duplicates(
    testbed: Testbed, store: SqlStore, settings: Settings
) -> None:
    [spec] = testbed.catalog(n=1, behaviours=["growing"])
    add(store, [spec])
    await crawl(store, settings)
    before = store.count_entries()
    assert spec.period is not None
    testbed.clock.advance(spec.period * 3)
    await refresh(store, settings, [spec.url])
    await refresh(store, settings, [spec.url])  # again: nothing new, nothing duplicated
    after = store.count_entries()
    assert after > before
    with store.engine.connect() as conn:
        dupes = conn.execute(
            sa.select(entries.c.entry_id)
            .group_by(entries.c.feed_id, entries.c.entry_id)
            .having(sa.func.count() > 1)
        ).all()
    assert dupes == []


async def test_permanent_redirect_moves_after_confirmation_temporary_never(
    testbed: Testbed, store: SqlStore, settings: Settings
) -> None:
    perm = testbed.catalog(n=1, behaviours=["redirect-301"])[0]
    temp = testbed.catalog(n=1, behaviours=["redirect-302"])[0]
    add(store, [perm, temp])
    await crawl(store, settings)
    assert store.get_feed(perm.url).url == perm.url  # one answer is not yet a move
    assert [h["status"] for h in store.feed_details(store.get_feed(perm.url).id)["redirects"]] == [
        301
    ]
    await refresh(store, settings, [perm.url, temp.url])
    moved = store.get_feed(perm.url)  # found by the URL the user gave
    assert moved.url == perm.final_url
    assert moved.original_url == perm.url
    assert store.get_feed(temp.url).url == temp.url
    assert [h["status"] for h in store.feed_details(store.get_feed(temp.url).id)["redirects"]] == [
        302
    ]


async def test_ten_failures_make_a_feed_dead_and_refresh_probes_it(
    testbed: Testbed, store: SqlStore, settings: Settings
) -> None:
    [spec] = [s for s in testbed.catalog(behaviours=["status-500"])][:1]
    add(store, [spec])
    for _ in range(10):
        await refresh(store, settings, [spec.url])
    feed = store.get_feed(spec.url)
    assert feed.status == "dead"
    assert feed.error_count == 10
    assert feed.next_crawl_at is None
    with store.engine.connect() as conn:
        n = conn.execute(sa.select(sa.func.count()).select_from(crawls)).scalar_one()
    assert n == 10


async def test_loopback_address_not_allowed_is_refused_without_a_connection(
    testbed: Testbed, store: SqlStore, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    connections = 0

    async def count(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        writer.close()

    server = await asyncio.start_server(count, "127.0.0.2", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        settings = testbed.settings(
            db=store.url,
            resolve=("*.test:127.0.0.1", "inside.test:127.0.0.2"),
            allow_networks=("127.0.0.1/32",),
        )
        url = f"http://inside.test:{port}/feed"
        add(store, [FeedSpec(url=url, behaviour="x", kind=None, host="inside.test")])
        summary = await crawl(store, settings)
        feed = store.get_feed(url)
        assert summary.errors["perimeter"] == 1
        assert feed.status == "error"
        assert feed.last_error.startswith("perimeter")
        assert connections == 0
    finally:
        server.close()
        await server.wait_closed()


async def test_throttle_keeps_every_health_column(
    testbed: Testbed, store: SqlStore, settings: Settings
) -> None:
    [spec] = testbed.catalog(n=1, behaviours=["status-503-retry"])
    add(store, [spec])
    before = store.get_feed(spec.url)
    summary = await crawl(store, settings)
    after = store.get_feed(spec.url)
    assert summary.counts["throttled"] == 1
    for column in (
        "status",
        "error_count",
        "last_error",
        "last_success_at",
        "last_fetched_at",
        "etag",
        "last_modified",
        "interval_seconds",
        "kind",
        "title",
    ):
        assert getattr(after, column) == getattr(before, column), column
    assert after.next_crawl_at is not None
    assert after.next_crawl_at >= before.added_at + timedelta(
        seconds=59
    )


@pytest.mark.parametrize("behaviour", ["html-discovery"])
async def test_feeds_add_discovers_feeds_on_a_site(
    testbed: Testbed, store: SqlStore, settings: Settings, behaviour: str
) -> None:
    [spec] = testbed.catalog(n=1, behaviours=[behaviour])
    async with Crawler(store, settings) as c:
        report = await c.add([spec.url, "ftp://nope.test/", "not a url at all"])
    assert report.added == [spec.final_url]
    assert {raw for raw, _ in report.invalid} == {"ftp://nope.test/", "not a url at all"}


async def test_feeds_add_shares_the_first_crawl(
    testbed: Testbed, store: SqlStore, settings: Settings
) -> None:
    [spec] = testbed.catalog(n=1, behaviours=["podcast"])
    testbed.reset_stats()
    settings = settings.replace(obey_robots=False)  # count the feed's requests alone
    async with Crawler(store, settings) as c:
        report = await c.add([spec.url])
    assert report.added == [spec.url]
    feed = store.get_feed(spec.url)
    assert feed.status == "ok"
    assert feed.kind == "podcast"
    assert feed.entry_count > 0
    stats = await testbed.stats()
    assert stats["total"]["requests"] == 1  # discovery and the first crawl shared one GET
    with store.engine.connect() as conn:
        rows = conn.execute(sa.select(crawls.c.trigger, crawls.c.outcome)).all()
    assert [tuple(r) for r in rows] == [("add", "ok")]


async def test_a_page_without_feeds_adds_nothing_unchecked(
    testbed: Testbed, store: SqlStore, settings: Settings
) -> None:
    """Well-known paths are guesses: each is fetched, and only a real feed is added."""
    [spec] = testbed.catalog(n=1, behaviours=["html-page"])
    async with Crawler(store, settings) as c:
        report = await c.add([spec.url])
    assert report.added == []
    assert [raw for raw, _ in report.failed] == [spec.url]
    assert list(store.iter_feeds()) == []
