"""Fixtures for the directory's integration tests: a real store, the app, rows written through
SqlStore (the crawler's write path), never raw SQL."""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from fairfetch.config import Settings
from fairfetch.feeds.model import Contact, Entry, Person
from fairfetch.net.outcome import Hop
from fairfetch.store import CrawlWrite, SqlStore, open_store

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

TOKEN = "s3cret-admin"
NOW = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)


def add_crawled(
    store: SqlStore,
    url: str,
    *,
    title: str | None = "A feed",
    kind: str = "blog",
    status: str = "ok",
    at: datetime | None = None,
    entries: Sequence[Entry] = (),
    authors: Sequence[tuple[Person, str]] | None = None,
    contacts: Sequence[Contact] | None = None,
    hops: Sequence[Hop] | None = None,
    description: str | None = None,
    link: str | None = None,
    error_count: int = 0,
    last_error: str | None = None,
    outcome: str = "ok",
    error_kind: str | None = None,
    politeness_key: str | None = None,
    **changes: Any,
) -> int:
    """A feed added and crawled once, through SqlStore.add_feed and SqlStore.write."""
    at = at or datetime.now(UTC)
    key = politeness_key or url.split("/")[2]
    feed, _ = store.add_feed(url, now=at - timedelta(minutes=5), politeness_key=key)
    feed_changes: dict[str, Any] = {
        "title": title,
        "kind": kind,
        "kind_evidence": [f"test says {kind}"],
        "status": status,
        "error_count": error_count,
        "last_error": last_error,
        "last_fetched_at": at,
        "next_crawl_at": at + timedelta(hours=1),
        "description": description,
        "link": link,
        **changes,
    }
    if status in ("ok",):
        feed_changes["last_success_at"] = at
    store.write(
        [
            CrawlWrite(
                feed_id=feed.id,
                url=url,
                at=at,
                outcome=outcome,
                politeness_key=key,
                feed_changes=feed_changes,
                http_status=200 if outcome == "ok" else None,
                error_kind=error_kind,
                bytes=1234,
                duration=0.2,
                entries=list(entries),
                authors=authors,
                contacts=contacts,
                hops=hops,
                first_crawl=True,
            )
        ]
    )
    return feed.id


def record_crawl(
    store: SqlStore,
    feed_id: int,
    *,
    at: datetime,
    outcome: str,
    error_kind: str | None = None,
    key: str = "example.test",
    nbytes: int = 0,
) -> None:
    """One more crawl row with no health change (as a throttle writes)."""
    feed = store.get_feed(feed_id)
    store.write(
        [
            CrawlWrite(
                feed_id=feed_id,
                url=feed.url,
                at=at,
                outcome=outcome,
                politeness_key=key,
                feed_changes={},
                error_kind=error_kind,
                bytes=nbytes,
                duration=0.1,
            )
        ]
    )


@pytest.fixture
def store(tmp_path: Any) -> Iterator[SqlStore]:
    s = open_store(f"sqlite:///{tmp_path}/web.db")
    yield s
    s.close()


@pytest.fixture
def any_store(db_url: str) -> Iterator[SqlStore]:
    """The store on SQLite and on PostgreSQL."""
    s = open_store(db_url)
    yield s
    s.close()


@pytest.fixture
def settings(store: SqlStore) -> Settings:
    return Settings(db=store.url, admin_token=TOKEN)


@pytest.fixture
def client(settings: Settings, store: SqlStore) -> Iterator[TestClient]:
    from fairfetch.web.app import create_app

    with TestClient(create_app(settings, store)) as c:
        yield c


def make_client(settings: Settings, store: SqlStore) -> TestClient:
    from fairfetch.web.app import create_app

    return TestClient(create_app(settings, store))
