"""Issue 3, "Wiring": the crawler stores what the parser gives (kind + evidence, authors, contacts
with source, categories, enclosures), and `feeds show --json` exposes it.

The CLI tests check that `feeds show --json` has the contract's keys and a kind; nothing crawled
a feed and then read back its categories, its people with their sources, or its entries'
enclosures from the store.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
import sqlalchemy as sa
from aiohttp import web
from typer.testing import CliRunner

from fairfetch.cli import app
from fairfetch.crawl import Crawler
from fairfetch.store import SqlStore
from fairfetch.store.tables import entries
from fairfetch.testing import loopback_server

from .conftest import loopback_settings

SHOW = b"""<?xml version="1.0"?>
<rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"
     xmlns:dc="http://purl.org/dc/elements/1.1/">
<channel>
  <title>Wired Show</title><link>http://show.test/</link>
  <managingEditor>editor@show.test (Ada Lovelace)</managingEditor>
  <itunes:owner><itunes:name>Grace Hopper</itunes:name>
    <itunes:email>grace@show.test</itunes:email></itunes:owner>
  <itunes:type>episodic</itunes:type>
  <itunes:category text="Technology"/>
  <category>Computing</category>
  <item>
    <guid>ep-1</guid><title>Episode one</title>
    <dc:creator>Alan Turing</dc:creator>
    <category>Machines</category>
    <enclosure url="http://show.test/ep1.mp3" type="audio/mpeg" length="12345"/>
  </item>
</channel></rss>"""

ENCLOSURE = "http://show.test/ep1.mp3"


def _show(db: str, url: str) -> dict[str, object]:
    result = CliRunner().invoke(app, ["--db", db, "feeds", "show", url, "--json"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.fixture
async def crawled(store: SqlStore) -> str:
    async def handle(request: web.Request) -> web.StreamResponse:
        if request.path == "/robots.txt":
            return web.Response(status=404)
        return web.Response(body=SHOW, content_type="application/rss+xml")

    async with loopback_server(handle) as port:
        url = f"http://show.test:{port}/feed.xml"
        async with Crawler(store, loopback_settings(store.url)) as crawler:
            report = await crawler.add([url])
        assert report.added == [url]
    return url


async def test_acceptance_crawl_stores_and_show_exposes_kind_people_categories(
    store: SqlStore, crawled: str, tmp_path: Path
) -> None:
    with store.engine.connect() as conn:
        [row] = conn.execute(sa.select(entries.c.entry_id, entries.c.categories,
                                       entries.c.enclosures, entries.c.authors)).all()
    assert row.entry_id == "ep-1"
    assert row.categories == ["Machines"]
    assert [(e["url"], e["type"], e["length"]) for e in row.enclosures] == [
        (ENCLOSURE, "audio/mpeg", 12345)]
    assert [a["name"] for a in row.authors] == ["Alan Turing"]

    shown = await asyncio.to_thread(_show, store.url, crawled)
    assert shown["kind"] == "podcast"
    evidence = shown["kind_evidence"]
    assert isinstance(evidence, list)
    assert evidence
    assert set(shown["categories"]) >= {"Technology", "Computing"}  # type: ignore[call-overload]
    contacts = {(c["url"], c["source"]) for c in shown["contacts"]}  # type: ignore[attr-defined]
    assert ("mailto:grace@show.test", "itunes:owner") in contacts
    assert ("mailto:editor@show.test", "managingEditor") in contacts
    names = {a["name"] for a in shown["authors"]}  # type: ignore[attr-defined]
    assert {"Grace Hopper", "Ada Lovelace"} <= names


async def test_acceptance_show_json_exposes_the_stored_enclosures(
    store: SqlStore, crawled: str
) -> None:
    shown = await asyncio.to_thread(_show, store.url, crawled)
    assert ENCLOSURE in json.dumps(shown)
