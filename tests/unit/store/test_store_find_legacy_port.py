"""A feed stored with its scheme's own port (as feeds added before the port was dropped from
feed URLs were) is found by the URL without it: `feeds show`, `refresh`, `remove`, subscribe and
`feeds add` look it up by the normalised spelling, and the add made a second feed."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from fairfetch.store import SqlStore, open_store


@pytest.fixture
def store(db_url: str) -> Iterator[SqlStore]:
    s = open_store(db_url)
    try:
        yield s
    finally:
        s.close()


def test_store_finds_a_feed_stored_with_its_default_port(store: SqlStore) -> None:
    now = datetime(2026, 11, 30, tzinfo=UTC)
    http, _ = store.add_feed("http://site.test:80/feed", now=now, politeness_key="site.test")
    https, _ = store.add_feed("https://site.test:443/a?b=1", now=now, politeness_key="site.test")
    found = store.find_feed("http://site.test/feed")
    assert found is not None
    assert found.id == http.id
    found = store.find_feed("https://site.test/a?b=1")
    assert found is not None
    assert found.id == https.id
    # Another port, or another scheme's, is another address.
    assert store.find_feed("https://site.test/feed") is None
    assert store.find_feed("http://site.test:8080/feed") is None
