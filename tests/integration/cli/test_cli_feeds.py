"""The `fairfetch` command's contract for the directory: feeds add/import/export/list/show/
refresh, crawl --once, stats — with bad input reported one by one and the good input kept."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fairfetch.cli import app
from fairfetch.testing import Testbed, testbed_thread


@pytest.fixture(scope="module")
def tb() -> Iterator[Testbed]:
    with testbed_thread(seed=11) as testbed:
        yield testbed


@pytest.fixture
def run(tb: Testbed, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    for k, v in tb.env().items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("FAIRFETCH_DB", f"sqlite:///{tmp_path}/cli.db")
    runner = CliRunner()

    def invoke(*args: str):  # type: ignore[no-untyped-def]
        return runner.invoke(app, list(args), catch_exceptions=False)

    return invoke


def test_add_reports_each_bad_url_and_keeps_the_good(run, tb: Testbed) -> None:  # type: ignore[no-untyped-def]
    good = tb.catalog(n=2, behaviours=["blog"])
    r = run("feeds", "add", good[0].url, "ftp://x.test/feed", good[1].url, "http://")
    assert r.exit_code == 2
    assert "ftp://x.test/feed" in r.output
    assert "unsupported scheme" in r.output
    assert "'http://'" in r.output
    assert "no host" in r.output
    listed = json.loads(run("feeds", "list", "--json").stdout)
    assert sorted(f["url"] for f in listed) == sorted(s.url for s in good)
    assert all(f["status"] == "ok" for f in listed)  # the add's GET was the first crawl


def test_import_opml_with_a_bad_entry_then_export(run, tb: Testbed, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    specs = tb.catalog(n=3, behaviours=["podcast"])
    outlines = "".join(f'<outline type="rss" text="p" xmlUrl="{s.url}"/>' for s in specs)
    opml = tmp_path / "subs.opml"
    opml.write_text(
        f'<?xml version="1.0"?><opml version="2.0"><head/><body>{outlines}'
        '<outline text="bad" xmlUrl="javascript:alert(1)"/></body></opml>'
    )
    r = run("feeds", "import", str(opml))
    assert r.exit_code == 2
    assert "javascript:alert(1)" in r.output
    exported = run("feeds", "export", "--opml").stdout
    for s in specs:
        assert s.url in exported
    missing = run("feeds", "import", str(tmp_path / "nope.opml"))
    assert missing.exit_code == 2
    assert "nope.opml" in missing.output


def test_show_json_has_the_contract_fields(run, tb: Testbed) -> None:  # type: ignore[no-untyped-def]
    [spec] = tb.catalog(n=1, behaviours=["letterbox"])
    run("feeds", "add", spec.url)
    shown = json.loads(run("feeds", "show", spec.url, "--json").stdout)
    for field in (
        "url",
        "original_url",
        "title",
        "kind",
        "kind_evidence",
        "status",
        "error_count",
        "last_error",
        "last_success_at",
        "last_fetched_at",
        "next_crawl_at",
        "etag",
        "last_modified",
        "redirects",
        "contacts",
        "authors",
        "entry_count",
        "websub",
    ):
        assert field in shown, field
    assert shown["kind"] == "newsletter"
    assert shown["kind_evidence"]
    assert shown["last_success_at"].endswith("Z")
    assert all(c["source"] for c in shown["contacts"])
    unknown = run("feeds", "show", "http://nowhere.test/feed")
    assert unknown.exit_code == 2
    assert "nowhere.test" in unknown.output


def test_crawl_once_exits_zero_with_failed_feeds_and_stats(
    run, tb: Testbed, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    from fairfetch.crawl import utcnow
    from fairfetch.net.politeness import politeness_key
    from fairfetch.store import open_store

    store = open_store(os.environ["FAIRFETCH_DB"])
    for s in tb.catalog(n=1, behaviours=["status-404"]) + tb.catalog(n=2, behaviours=["blog"]):
        store.add_feed(s.url, now=utcnow(), politeness_key=politeness_key(s.url))
    store.close()
    r = run("crawl", "--once", "--json")
    assert r.exit_code == 0
    summary = json.loads(r.stdout[r.stdout.index("{") :])
    assert summary["due"] == 3
    assert summary["failed"] == 1
    assert summary["ok"] == 2
    stats = json.loads(run("stats", "--json").stdout)
    assert stats["crawls"]["last_hour"]["error:http"] == 1
    assert stats["feeds"]["by_status"] == {"ok": 2, "error": 1}
    errors = json.loads(run("feeds", "list", "--status", "error", "--json").stdout)
    assert [f["last_error"].split(":")[0] for f in errors] == ["http"]
    bad = run("feeds", "list", "--status", "broken")
    assert bad.exit_code == 2
    assert "broken" in bad.output


def test_show_says_podcast_for_a_declared_show_without_episodes(run, tb: Testbed) -> None:  # type: ignore[no-untyped-def]
    [spec] = tb.catalog(behaviours=["podcast-empty"])
    assert run("feeds", "add", spec.url).exit_code == 0
    shown = json.loads(run("feeds", "show", spec.url, "--json").stdout)
    assert shown["kind"] == "podcast"
    assert shown["entry_count"] == 0
    assert any("itunes:type" in e or "podcast:" in e for e in shown["kind_evidence"])


def test_import_opml_reports_an_outline_whose_xmlurl_is_empty(  # type: ignore[no-untyped-def]
    run, tb: Testbed, tmp_path: Path
) -> None:
    """An outline that names a feed with an empty xmlUrl is a bad entry: said, naming it, with
    exit 2; the good ones are still added. A folder outline (no xmlUrl at all) is no entry."""
    [spec] = tb.catalog(n=1, behaviours=["podcast"])
    opml = tmp_path / "subs.opml"
    opml.write_text(
        '<?xml version="1.0"?><opml version="2.0"><head/><body><outline text="Tech">'
        f'<outline type="rss" text="Good show" xmlUrl="{spec.url}"/>'
        '<outline type="rss" text="Lost Weekly" xmlUrl="  "/></outline></body></opml>'
    )
    r = run("feeds", "import", str(opml))
    assert r.exit_code == 2
    assert "Lost Weekly" in r.output
    assert "empty xmlUrl" in r.output
    assert "Tech" not in r.output  # the folder is no entry
    listed = json.loads(run("feeds", "list", "--json").stdout)
    assert [f["url"] for f in listed] == [spec.url]


def test_import_opml_reports_markup_it_had_to_skip_and_adds_the_rest(  # type: ignore[no-untyped-def]
    run, tb: Testbed, tmp_path: Path
) -> None:
    """An outline the parser could not read (here an unquoted xmlUrl) is lost to recovery: the
    import said nothing and exited 0, as if the file held one feed. It is said, with the file
    and line, exit 2; the readable outlines are still added."""
    [spec] = tb.catalog(n=1, behaviours=["podcast"])
    opml = tmp_path / "subs.opml"
    opml.write_text(
        '<?xml version="1.0"?>\n<opml version="2.0"><head/><body>\n'
        f'<outline type="rss" text="Good show" xmlUrl="{spec.url}"/>\n'
        '<outline type="rss" text="Lost Weekly" xmlUrl=http://lost.test/feed />\n'
        "</body></opml>\n"
    )
    r = run("feeds", "import", str(opml))
    assert r.exit_code == 2
    assert f"{opml} line 4:" in r.output
    listed = json.loads(run("feeds", "list", "--json").stdout)
    assert [f["url"] for f in listed] == [spec.url]
