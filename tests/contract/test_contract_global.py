"""`fairfetch [--db URL] [--config FILE] COMMAND`: where the database is, that the schema appears
on first use, and that a bad --db or config file is one clear line and exit 2, never a traceback."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import Cli, assert_clean_error


def _tables(path: Path) -> set[str]:
    with sqlite3.connect(path) as conn:
        return {r[0] for r in conn.execute("select name from sqlite_master where type='table'")}


def test_default_database_is_fairfetch_db_in_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert not (tmp_path / "fairfetch.db").exists()
    r = Cli({})("feeds", "list", "--json")
    assert r.exit_code == 0, r.output
    assert r.stdout.strip() == "[]"
    # created and migrated on first use
    assert {"feeds", "alembic_version"} <= _tables(tmp_path / "fairfetch.db")


def test_db_from_environment_and_flag_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    env_db, flag_db = tmp_path / "env.db", tmp_path / "flag.db"
    cli = Cli({"FAIRFETCH_DB": f"sqlite:///{env_db}"})
    assert cli("stats", "--json").exit_code == 0
    assert env_db.exists()
    assert cli("--db", f"sqlite:///{flag_db}", "stats", "--json").exit_code == 0
    assert flag_db.exists()
    assert not (tmp_path / "fairfetch.db").exists()


@pytest.mark.parametrize(
    "url",
    [
        "garbage",
        "mysql://u@127.0.0.1/x",
        "sqlite:////nonexistent-dir-for-contract/x.db",
        # nothing listens on port 1 of loopback: refused at once
        "postgresql+psycopg://u:secret-pw@127.0.0.1:1/x",
    ],
)
def test_bad_db_is_a_clear_error(url: str, tmp_path: Path) -> None:
    for args in (["--db", url], []):
        r = Cli({"FAIRFETCH_DB": url})(*args, "feeds", "list")
        assert_clean_error(r, "database")
        assert "secret-pw" not in r.output  # a password is never echoed
        assert url.split("secret-pw")[0].split("@")[0][:10] in r.output


def test_bad_db_from_the_console_script_has_no_traceback(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FAIRFETCH_")}
    proc = subprocess.run(
        [sys.executable, "-m", "fairfetch", "--db", "sqlite:////nonexistent-dir/x.db", "stats"],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert "sqlite:////nonexistent-dir/x.db" in proc.stderr


@pytest.mark.parametrize(
    ("name", "content", "says"),
    [
        ("missing.toml", None, "does not exist"),
        ("syntax.toml", "port = [", "syntax.toml"),
        ("unknown.toml", "no_such_setting = 1", "no_such_setting"),
        ("value.toml", 'port = "eighty"', "port"),
        ("section.toml", "fairfetch = 3", "table"),
        ("adir", "<dir>", "cannot read"),
    ],
)
def test_bad_config_file_is_a_clear_error(
    tmp_path: Path, name: str, content: str | None, says: str
) -> None:
    path = tmp_path / name
    if content == "<dir>":
        path.mkdir()
    elif content is not None:
        path.write_text(content)
    r = Cli({"FAIRFETCH_DB": f"sqlite:///{tmp_path}/x.db"})("--config", str(path), "stats")
    assert_clean_error(r, name, says)


def test_config_file_then_environment_then_flag(tmp_path: Path) -> None:
    """Precedence: file < environment < flag; [fairfetch] section or top-level keys."""
    file_db, env_db = tmp_path / "file.db", tmp_path / "env.db"
    conf = tmp_path / "ff.toml"
    conf.write_text(f'[fairfetch]\ndb = "sqlite:///{file_db}"\n')
    assert Cli({})("--config", str(conf), "stats", "--json").exit_code == 0
    assert file_db.exists()
    cli = Cli({"FAIRFETCH_DB": f"sqlite:///{env_db}"})
    assert cli("--config", str(conf), "stats", "--json").exit_code == 0
    assert env_db.exists()


def test_bad_environment_value_names_the_variable(tmp_path: Path) -> None:
    r = Cli({"FAIRFETCH_DB": f"sqlite:///{tmp_path}/x.db", "FAIRFETCH_NOTIFY_RATE": "fast"})(
        "notify", "send-due"
    )
    assert_clean_error(r, "FAIRFETCH_NOTIFY_RATE", "fast")


def test_every_listing_or_showing_command_takes_json() -> None:
    from fairfetch.cli import app

    runner = Cli({})
    for cmd in (
        ["feeds", "list"], ["feeds", "show"], ["feeds", "refresh"], ["stats"], ["crawl"],
        ["notify", "list"], ["notify", "outbox"], ["notify", "send-due"], ["audit", "report"],
        ["websub", "list"], ["websub", "stats"],
    ):  # fmt: skip
        r = runner.runner.invoke(app, [*cmd, "--help"])
        assert r.exit_code == 0, cmd
        assert "--json" in r.output, cmd


@pytest.mark.parametrize(
    "args",
    [
        ["serve", "--port", "70000"],
        ["run", "--port", "-1"],
        ["testbed", "--port", "65536"],
        ["demo", "--port", "99999"],
    ],
)
def test_port_out_of_range_is_refused_before_anything_starts(args: list[str]) -> None:
    r = Cli({})(*args)
    assert_clean_error(r, "--port")


def test_json_times_are_utc_with_z_whatever_the_source() -> None:
    import io
    import json
    from contextlib import redirect_stdout
    from datetime import UTC, datetime, timedelta, timezone

    from fairfetch.cli._app import print_json

    out = io.StringIO()
    paris = timezone(timedelta(hours=2))
    with redirect_stdout(out):
        print_json({"a": datetime(2026, 3, 3, 10, 0, tzinfo=paris),
                    "b": [datetime(2026, 3, 3, 8, 0)], "c": datetime(2026, 3, 3, 8, 0, tzinfo=UTC),
                    "d": None})  # fmt: skip
    assert json.loads(out.getvalue()) == {
        "a": "2026-03-03T08:00:00Z", "b": ["2026-03-03T08:00:00Z"], "c": "2026-03-03T08:00:00Z",
        "d": None,
    }  # fmt: skip


@pytest.mark.parametrize(
    ("var", "value"),
    [("FAIRFETCH_ALLOW_NETWORKS", "10.0.0.0/33"), ("FAIRFETCH_RESOLVE", "*.test:127.0.0.1,oops")],
)
def test_bad_network_settings_stop_feeds_add_with_exit_2(
    tmp_path: Path, var: str, value: str
) -> None:
    cli = Cli({"FAIRFETCH_DB": f"sqlite:///{tmp_path}/n.db",
               "FAIRFETCH_RESOLVE": "*.test:127.0.0.1", var: value})  # fmt: skip
    assert_clean_error(cli("feeds", "add", "http://a.test:9/feed"), var)
