"""PostgreSQL's text search reads words by the database's LC_CTYPE: under C (``initdb
--no-locale``, a bare ``createdb`` on such a cluster) it neither lowercases nor even counts as
letters anything outside ASCII, so "Подкаст" and "Émile" are found by no spelling. fairfetch
says so when it opens such a database, naming it and the fix; a UTF-8 ctype is silent."""

from __future__ import annotations

import logging
import os
import uuid
from collections.abc import Iterator

import pytest
import sqlalchemy as sa

from fairfetch.crawl import utcnow
from fairfetch.store import directory_repo as repo
from fairfetch.store import open_store
from fairfetch.store.tables import feeds


@pytest.fixture
def database_with_ctype(pg_url: str) -> Iterator[object]:
    base = os.environ["FAIRFETCH_TEST_PG"]
    admin = sa.create_engine(base, isolation_level="AUTOCOMMIT")
    made: list[str] = []

    def make(ctype: str) -> str:
        name = "t_" + uuid.uuid4().hex[:12]
        with admin.connect() as conn:
            conn.execute(sa.text(
                f"CREATE DATABASE \"{name}\" TEMPLATE template0 ENCODING 'UTF8' "
                f"LC_CTYPE '{ctype}' LC_COLLATE '{ctype}'"
            ))  # fmt: skip
        made.append(name)
        return base.rsplit("/", 1)[0] + "/" + name

    yield make
    with admin.connect() as conn:
        for name in made:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


def test_store_pg_c_ctype_is_named_with_its_fix(
    database_with_ctype: object, caplog: pytest.LogCaptureFixture
) -> None:
    make = database_with_ctype
    c_url = make("C")  # type: ignore[operator]
    with caplog.at_level(logging.WARNING, logger="fairfetch"):
        open_store(c_url).close()
    said = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(said) == 1, said
    assert "LC_CTYPE" in said[0]
    assert "C.UTF-8" in said[0]
    assert c_url.rsplit("/", 1)[1] in said[0]  # the database is named
    caplog.clear()
    utf8_url = make("C.UTF-8")  # type: ignore[operator]
    with caplog.at_level(logging.WARNING, logger="fairfetch"):
        store = open_store(utf8_url)
    try:
        assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []
        # ...and there the words are found whatever their case.
        store.add_feed("http://podcast.test/feed", now=utcnow(), politeness_key="podcast.test")
        with store.engine.begin() as conn:
            conn.execute(feeds.update().values(title="Подкаст про всё"))
        assert repo.search_feeds(store, "подкаст").total == 1
    finally:
        store.close()

