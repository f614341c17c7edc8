"""The directory commands as DESIGN.md's *Public contract* lists them: feeds add / import /
export / list / show / refresh, crawl, stats — field names, types, times, exit codes."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from lxml import etree

from fairfetch.testing import Testbed

from .conftest import Cli, assert_clean_error

ISO_Z = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")
SHOW_FIELDS = {
    "url", "original_url", "title", "kind", "kind_evidence", "status", "error_count",
    "last_error", "last_success_at", "last_fetched_at", "next_crawl_at", "etag",
    "last_modified", "redirects", "contacts", "authors", "entry_count", "websub",
}  # fmt: skip
TIME_FIELDS = ("last_success_at", "last_fetched_at", "next_crawl_at")


def _time(value: Any) -> datetime | None:
    if value is None:
        return None
    assert isinstance(value, str), value
    assert ISO_Z.match(value), value
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def assert_show_shape(shown: dict[str, Any]) -> None:
    assert set(shown) >= SHOW_FIELDS, SHOW_FIELDS - set(shown)
    assert isinstance(shown["url"], str)
    assert isinstance(shown["original_url"], str)
    assert shown["title"] is None or isinstance(shown["title"], str)
    assert shown["kind"] in (None, "podcast", "video", "newsletter", "blog")
    assert all(isinstance(e, str) for e in shown["kind_evidence"])
    assert shown["status"] in ("new", "ok", "error", "dead")
    assert isinstance(shown["error_count"], int)
    assert shown["last_error"] is None or isinstance(shown["last_error"], str)
    for f in TIME_FIELDS:
        _time(shown[f])
    for f in ("etag", "last_modified"):
        assert shown[f] is None or isinstance(shown[f], str)
    for hop in shown["redirects"]:
        assert {"url", "status", "location"} <= set(hop)
        assert isinstance(hop["status"], int)
    for c in shown["contacts"]:
        assert set(c) >= {"url", "network", "source"}
        assert c["url"]
        assert c["network"]
        assert c["source"]
    for a in shown["authors"]:
        assert {"name", "email", "url"} <= set(a)
    assert isinstance(shown["entry_count"], int)
    websub = shown["websub"]
    assert isinstance(websub, dict)
    assert {"hub", "lease_expires_at"} <= set(websub)
    _time(websub["lease_expires_at"])


def test_show_json_fields_types_and_times(cli: Cli, tb: Testbed) -> None:
    [blog] = tb.catalog(n=1, behaviours=["blog"])
    [gone] = tb.catalog(n=1, behaviours=["status-410"])
    [video] = tb.catalog(n=1, behaviours=["youtube"])
    r = cli("feeds", "add", blog.url, gone.url, video.url)
    assert r.exit_code == 0, r.output
    before = datetime.now(UTC)

    ok = cli.json("feeds", "show", blog.url, "--json")
    assert_show_shape(ok)
    assert (ok["url"], ok["original_url"], ok["status"], ok["error_count"]) == (
        blog.url, blog.url, "ok", 0)
    assert ok["kind"] == "blog"
    assert ok["kind_evidence"]
    assert ok["entry_count"] > 0
    assert ok["last_success_at"] == ok["last_fetched_at"]
    assert _time(ok["next_crawl_at"]) > before  # type: ignore[operator]
    assert ok["etag"] or ok["last_modified"]
    assert ok["contacts"]
    assert ok["websub"]["hub"] is None

    dead = cli.json("feeds", "show", gone.url, "--json")
    assert_show_shape(dead)
    assert (dead["status"], dead["error_count"]) == ("dead", 1)
    assert dead["last_error"].startswith("gone")
    assert dead["last_success_at"] is None
    assert dead["next_crawl_at"] is None
    assert dead["last_fetched_at"] is not None

    vid = cli.json("feeds", "show", video.url, "--json")
    assert_show_shape(vid)
    assert vid["kind"] == "video"
    assert vid["websub"]["hub"]  # the hub the feed advertises


def test_show_of_a_feed_never_crawled_has_nulls(cli: Cli, tb: Testbed, db_url: str) -> None:
    from fairfetch.store import open_store

    store = open_store(db_url)
    store.add_feed("http://never.test/feed", now=datetime.now(UTC), politeness_key="never.test")
    store.close()
    shown = cli.json("feeds", "show", "http://never.test/feed", "--json")
    assert_show_shape(shown)
    assert shown["status"] == "new"
    assert [shown[f] for f in ("last_success_at", "last_fetched_at", "last_error", "etag")] == [
        None] * 4
    assert shown["next_crawl_at"] is not None  # due now
    assert shown["redirects"] == []
    assert shown["contacts"] == []
    assert shown["entry_count"] == 0


def test_a_moved_feed_is_found_by_either_url(cli: Cli, tb: Testbed) -> None:
    [spec] = tb.catalog(n=1, behaviours=["redirect-308"])
    assert spec.final_url
    assert spec.final_url != spec.url
    cli.ok("feeds", "add", spec.url)
    # a permanent redirect moves the feed once the target has answered on consecutive crawls
    cli.ok("feeds", "refresh", spec.url)
    by_given = cli.json("feeds", "show", spec.url, "--json")
    by_current = cli.json("feeds", "show", spec.final_url, "--json")
    assert by_given == by_current
    assert (by_given["url"], by_given["original_url"]) == (spec.final_url, spec.url)
    assert [h["status"] for h in by_given["redirects"]] == [308]
    # refresh by the old URL crawls the same feed, listed once
    summary = cli.json("feeds", "refresh", spec.url, spec.final_url, "--json")
    assert summary["due"] == 1
    assert [f["url"] for f in cli.json("feeds", "list", "--json")] == [spec.final_url]
    # the text view names the fields too, with ISO UTC times
    text = cli.ok("feeds", "show", spec.url).stdout
    assert "original_url" in text
    assert spec.url in text
    assert re.search(r"last_success_at\s+\d{4}-\d\d-\d\dT[\d:.]+Z", text)


def test_list_filters_and_rejects_unknown_values(cli: Cli, tb: Testbed) -> None:
    blogs = tb.catalog(n=2, behaviours=["blog-etag-only"])
    [broken] = tb.catalog(n=1, behaviours=["status-500"])
    [pod] = tb.catalog(n=1, behaviours=["podcast"])
    cli.ok("feeds", "add", *(s.url for s in blogs), broken.url, pod.url)
    listed = cli.json("feeds", "list", "--json")
    assert len(listed) == 4
    for f in listed:
        assert {"url", "original_url", "title", "kind", "status", "error_count",
                "last_error", "entry_count", *TIME_FIELDS} <= set(f)  # fmt: skip
        for t in TIME_FIELDS:
            _time(f[t])
    assert [f["url"] for f in cli.json("feeds", "list", "--kind", "podcast", "--json")] == [
        pod.url]
    assert [f["url"] for f in cli.json("feeds", "list", "--status", "error", "--json")] == [
        broken.url]
    assert sorted(f["url"] for f in cli.json("feeds", "list", "--kind", "blog", "--status",
                                              "ok", "--json")) == sorted(s.url for s in blogs)
    assert cli.json("feeds", "list", "--status", "dead", "--json") == []
    assert_clean_error(cli("feeds", "list", "--kind", "vlog"), "vlog")
    assert_clean_error(cli("feeds", "list", "--status", "broken"), "broken")
    assert "status" in cli.ok("feeds", "list").stdout


def test_add_bad_input_exits_2_names_it_and_keeps_everything_else(cli: Cli, tb: Testbed) -> None:
    first, second = tb.catalog(n=2, behaviours=["blog-lastmod-only"])
    cli.ok("feeds", "add", first.url)
    r = cli("feeds", "add", "ftp://x.test/feed", second.url, "http://", "not a url")
    assert_clean_error(r, "ftp://x.test/feed", "'http://'", "not a url")
    urls = sorted(f["url"] for f in cli.json("feeds", "list", "--json"))
    assert urls == sorted([first.url, second.url])  # the good one added, nothing lost
    # adding again is not an error, and does not duplicate
    r = cli("feeds", "add", first.url)
    assert r.exit_code == 0
    assert "exists" in r.output
    assert len(cli.json("feeds", "list", "--json")) == 2


def test_opml_export_then_import_round_trip(cli: Cli, tb: Testbed, tmp_path: Path) -> None:
    specs = tb.catalog(n=3, behaviours=["blog-no-validators"])
    cli.ok("feeds", "add", *(s.url for s in specs))
    exported = cli.ok("feeds", "export", "--opml").stdout_bytes
    root = etree.fromstring(exported)
    assert root.tag == "opml"
    assert root.get("version") == "2.0"
    assert sorted(o.get("xmlUrl") for o in root.iter("outline")) == sorted(s.url for s in specs)
    opml = tmp_path / "subs.opml"
    opml.write_bytes(exported)

    other = Cli({**cli.env, "FAIRFETCH_DB": f"sqlite:///{tmp_path}/other.db"})
    other.ok("feeds", "import", str(opml))
    assert sorted(f["url"] for f in other.json("feeds", "list", "--json")) == sorted(
        s.url for s in specs)

    # one bad outline: named, exit 2, the others still imported
    [extra] = tb.catalog(n=1, behaviours=["podcast"])
    mixed = tmp_path / "mixed.opml"
    mixed.write_text(
        '<?xml version="1.0"?><opml version="2.0"><head/><body>'
        f'<outline text="ok" xmlUrl="{extra.url}"/>'
        '<outline text="bad" xmlUrl="javascript:alert(1)"/></body></opml>'
    )
    assert_clean_error(other("feeds", "import", str(mixed)), "javascript:alert(1)")
    assert len(other.json("feeds", "list", "--json")) == 4

    not_opml = tmp_path / "page.opml"
    not_opml.write_text("<html><body>hi</body></html>")
    for path in (not_opml, tmp_path / "missing.opml", tmp_path):
        assert_clean_error(other("feeds", "import", str(path)), path.name)
    assert len(other.json("feeds", "list", "--json")) == 4


def test_refresh_by_url_all_and_kind(cli: Cli, tb: Testbed) -> None:
    [blog] = tb.catalog(n=1, behaviours=["hint-ttl"])
    videos = tb.catalog(n=2, behaviours=["youtube"])[1:]
    cli.ok("feeds", "add", blog.url, *(v.url for v in videos))
    before = {f["url"]: f["last_fetched_at"] for f in cli.json("feeds", "list", "--json")}

    summary = cli.json("feeds", "refresh", "--all", "--kind", "video", "--json")
    assert summary["due"] == len(videos)
    after = {f["url"]: f["last_fetched_at"] for f in cli.json("feeds", "list", "--json")}
    assert after[blog.url] == before[blog.url]
    assert all(after[v.url] != before[v.url] for v in videos)

    # an unknown feed is named, exit 2; the known one is still crawled
    r = cli("feeds", "refresh", blog.url, "http://nowhere.test/feed", "--json")
    assert_clean_error(r, "http://nowhere.test/feed")
    assert cli.json("feeds", "show", blog.url, "--json")["last_fetched_at"] != before[blog.url]

    assert_clean_error(cli("feeds", "refresh", "--all", "--kind", "vlog"), "vlog")
    assert_clean_error(cli("feeds", "refresh"), "--all")
    assert_clean_error(cli("feeds", "refresh", blog.url, "--kind", "video"), "--kind")
    assert_clean_error(cli("feeds", "show", "http://nowhere.test/feed"), "nowhere.test")
    assert len(cli.json("feeds", "list", "--json")) == 1 + len(videos)


def test_crawl_once_exits_zero_with_failed_feeds_and_max(
    cli: Cli, tb: Testbed, db_url: str
) -> None:
    from fairfetch.net.politeness import politeness_key
    from fairfetch.store import open_store

    specs = (tb.catalog(n=1, behaviours=["status-404"]) + tb.catalog(n=1, behaviours=["blog"])
             + tb.catalog(n=2, behaviours=["hint-sy"]))  # fmt: skip
    store = open_store(db_url)
    for s in specs:
        store.add_feed(s.url, now=datetime.now(UTC), politeness_key=politeness_key(s.url))
    store.close()
    r = cli("crawl", "--once", "--max", "2", "--json")
    assert r.exit_code == 0, r.output
    first = _last_json_object(r.stdout)
    assert first["due"] == 2
    r = cli("crawl", "--once", "--json")
    assert r.exit_code == 0, r.output  # a failed feed is data, not an exit code
    second = _last_json_object(r.stdout)
    assert second["due"] == 2
    assert first["failed"] + second["failed"] == 1
    assert first["ok"] + second["ok"] == 3
    assert cli("crawl", "--once").exit_code == 0  # nothing due: still 0
    assert cli("crawl", "--max", "0").exit_code == 2

    stats = cli.json("stats", "--json")
    assert stats["feeds"]["total"] == 4
    assert stats["feeds"]["by_status"] == {"ok": 3, "error": 1}
    assert sum(stats["crawls"]["last_hour"].values()) == 4
    assert {"due", "oldest_due_at", "next_hour"} <= set(stats["queue"])
    _time(stats["queue"]["oldest_due_at"])
    assert "total" in cli.ok("stats").stdout


def _last_json_object(text: str) -> dict[str, Any]:
    import json

    return json.loads(text[text.index("{"):])  # a progress line may precede it


def test_text_views_print_hostile_titles_and_urls_as_they_are(cli: Cli, db_url: str) -> None:
    """Data is never read as console markup: a title like ``[/b]`` would otherwise crash the
    listing (rich MarkupError) or vanish from it."""
    from fairfetch.store import open_store

    url = "http://odd.test/feed?x=[/b]&y=[red]"
    store = open_store(db_url)
    store.add_feed(url, now=datetime.now(UTC), politeness_key="odd.test")
    store.close()
    listed = cli.ok("feeds", "list")
    assert "[/b]" in listed.stdout
    shown = cli.ok("feeds", "show", url)
    assert url in shown.stdout.replace("\n", "")
