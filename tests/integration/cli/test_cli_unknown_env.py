"""A FAIRFETCH_ variable that names no setting is said on stderr, with the setting it most
likely meant: ``FAIRFETCH_DATABASE=...`` was silently ignored and the newcomer's feeds went to
./fairfetch.db. A warning, not an error: the command still runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from fairfetch.cli import app
from fairfetch.config import unknown_environment


def test_config_unknown_environment_names_the_likely_setting() -> None:
    env = {
        "FAIRFETCH_DATABASE": "sqlite:///x.db",
        "FAIRFETCH_ALLOW_NETWORK": "127.0.0.1/32",
        "FAIRFETCH_DB": "sqlite:///y.db",  # a setting
        "FAIRFETCH_TEST_PG": "postgresql+psycopg://u@127.0.0.1/x",  # the suite's own
        "FAIRFETCH_NONSENSE_ZZZ": "1",
        "PATH": "/usr/bin",
    }
    assert unknown_environment(env) == [
        "FAIRFETCH_ALLOW_NETWORK is not a fairfetch setting, ignored "
        "(did you mean FAIRFETCH_ALLOW_NETWORKS?)",
        "FAIRFETCH_DATABASE is not a fairfetch setting, ignored (did you mean FAIRFETCH_DB?)",
        "FAIRFETCH_NONSENSE_ZZZ is not a fairfetch setting, ignored",
    ]


def test_cli_warns_of_a_misspelt_variable_and_still_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAIRFETCH_DB", f"sqlite:///{tmp_path}/env.db")
    monkeypatch.setenv("FAIRFETCH_DATABASE", f"sqlite:///{tmp_path}/other.db")
    r = CliRunner().invoke(app, ["feeds", "list", "--json"])
    assert r.exit_code == 0, (r.output, r.exception)
    assert r.stdout.strip() == "[]"
    assert r.stderr.strip() == (
        "warning: FAIRFETCH_DATABASE is not a fairfetch setting, ignored "
        "(did you mean FAIRFETCH_DB?)"
    )


def test_cli_says_nothing_when_every_variable_is_a_setting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAIRFETCH_DB", f"sqlite:///{tmp_path}/env.db")
    r = CliRunner().invoke(app, ["feeds", "list", "--json"])
    assert r.exit_code == 0, (r.output, r.exception)
    assert r.stderr == ""


def test_config_key_overrides_in_the_environment_is_said_to_be_config_file_only() -> None:
    """key_overrides is a setting, read from the config file only (a table): the warning said
    FAIRFETCH_KEY_OVERRIDES 'is not a fairfetch setting', sending the operator to look for
    another name instead of to the file."""
    [message] = unknown_environment({"FAIRFETCH_KEY_OVERRIDES": '{"a.test": {"gap": 2}}'})
    assert message.startswith("FAIRFETCH_KEY_OVERRIDES is ignored")
    assert "config file" in message
    assert "not a fairfetch setting" not in message
