"""A newcomer's walk through the README's directory commands, on a fresh database against the
testbed: what they saw that was wrong or unclear, one test each."""

from __future__ import annotations

import dataclasses
import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from fairfetch.cli import app
from fairfetch.config import Settings
from fairfetch.testing import Testbed, testbed_thread

_SETTING_VARS = ["FAIRFETCH_" + f.name.upper() for f in dataclasses.fields(Settings)]


@pytest.fixture(scope="module")
def tb() -> Iterator[Testbed]:
    with testbed_thread(seed=12) as testbed:
        yield testbed


@pytest.fixture
def run(tb: Testbed, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    for var in _SETTING_VARS:  # the caller's shell must not leak in
        monkeypatch.delenv(var, raising=False)
    env = {**tb.env(), "FAIRFETCH_DB": f"sqlite:///{tmp_path}/walk.db"}
    runner = CliRunner()

    def invoke(*args: str) -> Result:
        return runner.invoke(app, list(args), env=env)

    return invoke


def _show(run: Any, url: str) -> Any:
    r = run("feeds", "show", url, "--json")
    assert r.exit_code == 0, (r.output, r.exception)
    return json.loads(r.stdout)


def test_walk_s12_directory_add_of_a_site_crawls_the_feed_its_page_declares(
    run: Any, tb: Testbed
) -> None:
    """``feeds add SITE`` printed "added FEED" for the feed the page declared, but that feed
    was never fetched (the add's one GET was the page): ``feeds show`` had no title, no kind,
    status ``new``, and a dead link on a page would have looked healthy. The web's add crawls
    it at once; so does the command now."""
    [site] = tb.catalog(n=1, behaviours=["html-discovery"])
    r = run("feeds", "add", site.url)
    assert r.exit_code == 0, (r.output, r.exception)
    assert f"added {site.final_url}" in r.stdout.splitlines()
    shown = _show(run, site.final_url)
    assert shown["status"] == "ok"
    assert shown["title"]
    assert shown["kind"] == site.kind
    assert [c["trigger"] for c in shown["crawls"]] == ["add"]


def test_walk_s12_directory_add_of_a_feed_still_fetches_it_once(run: Any, tb: Testbed) -> None:
    """The other direction: a feed URL given as such is read by the add's own GET, not twice."""
    [blog] = tb.catalog(n=1, behaviours=["blog"])
    r = run("feeds", "add", blog.url)
    assert r.exit_code == 0, (r.output, r.exception)
    assert [c["trigger"] for c in _show(run, blog.url)["crawls"]] == ["add"]


@pytest.mark.parametrize("command", [["feeds", "list"], ["stats", "--json"], ["serve"]])
def test_walk_s12_directory_db_in_a_missing_directory_is_named(
    run: Any, tmp_path: Path, command: list[str]
) -> None:
    """``--db sqlite:///nodir/x.db`` said only SQLite's "unable to open database file"."""
    r = run("--db", f"sqlite:///{tmp_path}/nodir/x.db", *command)
    assert r.exit_code == 2, (r.output, r.exception)
    assert f"directory '{tmp_path}/nodir' does not exist" in r.output
    assert "unable to open database file" not in r.output
    assert not (tmp_path / "nodir").exists()  # refused, not made


def test_walk_s12_directory_db_that_is_a_directory_is_named(run: Any, tmp_path: Path) -> None:
    r = run("--db", f"sqlite:///{tmp_path}", "feeds", "list")
    assert r.exit_code == 2, (r.output, r.exception)
    assert f"'{tmp_path}' is a directory" in r.output
    assert "unable to open database file" not in r.output


def test_walk_s12_directory_db_given_as_a_path_says_how_to_write_it(
    run: Any, tmp_path: Path
) -> None:
    """A path where a URL belongs was "is not a valid URL", with no word of the fix."""
    r = run("--db", f"{tmp_path}/x.db", "feeds", "list")
    assert r.exit_code == 2, (r.output, r.exception)
    assert f"sqlite:///{tmp_path}/x.db" in r.output
    assert not (tmp_path / "x.db").exists()


def test_walk_s12_directory_db_in_an_existing_directory_still_opens(
    run: Any, tmp_path: Path
) -> None:
    (tmp_path / "sub").mkdir()
    r = run("--db", f"sqlite:///{tmp_path}/sub/x.db", "stats", "--json")
    assert r.exit_code == 0, (r.output, r.exception)
    assert json.loads(r.stdout)["feeds"]["total"] == 0


@pytest.mark.parametrize("command", ["serve", "run"])
def test_walk_s12_directory_serve_on_a_taken_port_names_the_option(
    run: Any, tmp_path: Path, command: str
) -> None:
    """A taken port ended in "could not serve on 127.0.0.1:P (uvicorn exit 3)", the reason only
    in uvicorn's log line above and no word of --port; now one line says both, before the
    database is opened or anything started."""
    db = tmp_path / "taken.db"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        r = run("--db", f"sqlite:///{db}", command, "--host", "127.0.0.1", "--port", str(port))
    assert r.exit_code == 2, (r.output, r.exception)
    assert f"cannot serve on 127.0.0.1:{port} (Address already in use)" in r.output
    assert "--port" in r.output
    assert "uvicorn exit" not in r.output
    assert not db.exists()
