"""A config file that says something fairfetch would not do is refused, naming the file and
the key, never half-read: a setting silently dropped or bent into another value is the
operator's mistake hidden until the crawl behaves differently from the file."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from fairfetch.cli import app
from fairfetch.config import load_settings
from fairfetch.errors import ConfigError


@pytest.mark.parametrize(
    "text",
    [
        # A setting above the table: TOML puts it at top level, beside [fairfetch].
        "per_key_in_flight = 5\n[fairfetch]\nglobal_in_flight = 7\n",
        # A table for one setting written outside [fairfetch] after it.
        '[fairfetch]\nglobal_in_flight = 7\n[key_overrides."a.test"]\nin_flight = 1\n',
    ],
)
def test_contract_config_a_setting_outside_the_fairfetch_table_is_refused(
    text: str, tmp_path: Path
) -> None:
    conf = tmp_path / "mixed.toml"
    conf.write_text(text)
    with pytest.raises(ConfigError) as caught:
        load_settings(conf, environ={})
    message = str(caught.value)
    assert str(conf) in message
    assert ("per_key_in_flight" in message) or ("key_overrides" in message)
    assert "[fairfetch]" in message


def test_contract_config_a_setting_outside_the_table_exits_2_naming_it(tmp_path: Path) -> None:
    conf = tmp_path / "mixed.toml"
    conf.write_text("per_key_in_flight = 5\n[fairfetch]\nglobal_in_flight = 7\n")
    r = CliRunner().invoke(
        app, ["--db", f"sqlite:///{tmp_path}/x.db", "--config", str(conf), "stats"], env={}
    )
    assert r.exit_code == 2, r.output
    assert r.exception is None or isinstance(r.exception, SystemExit)
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, lines
    assert "per_key_in_flight" in lines[0]
    assert str(conf) in lines[0]


def test_contract_config_top_level_or_table_alone_still_read(tmp_path: Path) -> None:
    flat = tmp_path / "flat.toml"
    flat.write_text("per_key_in_flight = 5\n")
    table = tmp_path / "table.toml"
    table.write_text('[fairfetch]\nper_key_in_flight = 5\n[fairfetch.key_overrides."a.test"]\n'
                     "in_flight = 1\n")
    assert load_settings(flat, environ={}).per_key_in_flight == 5
    read = load_settings(table, environ={})
    assert read.per_key_in_flight == 5
    assert read.key_overrides == {"a.test": {"in_flight": 1}}
