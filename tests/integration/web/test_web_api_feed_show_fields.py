"""GET /api/v1/feeds/{id} is documented as "the fields of ``feeds show --json`` plus recent
crawls": every field the CLI shows is in the API's document, with the same value."""

from __future__ import annotations

import json
from typing import Any

from typer.testing import CliRunner

from fairfetch.cli import app
from fairfetch.store import SqlStore

from .conftest import TOKEN, add_crawled

AUTH = {"Authorization": f"Bearer {TOKEN}"}


def _cli_show(store: SqlStore, feed_id: int) -> dict[str, Any]:
    r = CliRunner().invoke(app, ["--db", store.url, "feeds", "show", str(feed_id), "--json"])
    assert r.exit_code == 0, (r.output, r.exception)
    shown: dict[str, Any] = json.loads(r.stdout)
    return shown


def test_web_api_feed_has_every_field_of_feeds_show_json_duplicate_of_included(
    client: Any, store: SqlStore
) -> None:
    kept = add_crawled(store, "http://127.0.0.2:9/new.xml")
    # moved permanently onto a URL the directory already crawled: folded into that feed
    folded = add_crawled(
        store,
        "http://127.0.0.2:9/old.xml",
        status="dead",
        error_count=1,
        last_error="duplicate: moved permanently to http://127.0.0.2:9/new.xml",
        outcome="error",
        error_kind="duplicate",
        next_crawl_at=None,
        duplicate_of=kept,
    )
    for feed_id, duplicate_of in ((folded, kept), (kept, None)):
        cli = _cli_show(store, feed_id)
        api = client.get(f"/api/v1/feeds/{feed_id}").json()
        assert cli["duplicate_of"] == duplicate_of
        assert set(cli) - set(api) == set(), feed_id
        assert {k: api[k] for k in cli if k != "crawls"} == {
            k: v for k, v in cli.items() if k != "crawls"
        }
    # the writing calls hand back the same document (127.0.0.2 is refused: no connection)
    refreshed = client.post(f"/api/v1/feeds/{folded}/refresh", headers=AUTH)
    assert refreshed.status_code == 200, refreshed.text
    assert set(refreshed.json()["feed"]) == set(client.get(f"/api/v1/feeds/{folded}").json())
