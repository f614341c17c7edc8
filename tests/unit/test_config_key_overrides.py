"""key_overrides is checked when the config file is read, like every other setting: it was
checked only when a crawler built its dispatcher, so `crawl --once` with nothing due, `serve`
and `notify` ran on a file the next crawl would refuse, and that refusal did not name the file."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from fairfetch.cli import app
from fairfetch.config import load_settings
from fairfetch.errors import ConfigError


@pytest.mark.parametrize(
    ("table", "said"),
    [
        ('"a.test" = {in_flight = "two"}', "must be numbers"),
        ('"a.test" = 3', "expected a table"),
        ('"a.test" = {inflight = 1}', "unknown field"),
        ('"a.test" = {in_flight = 0}', "in_flight"),
        ('"exa mple" = {in_flight = 1}', "not a host name"),
    ],
)
def test_config_a_bad_key_override_is_refused_naming_the_file(
    table: str, said: str, tmp_path: Path
) -> None:
    conf = tmp_path / "over.toml"
    conf.write_text(f"key_overrides = {{{table}}}\n")
    with pytest.raises(ConfigError) as caught:
        load_settings(conf, environ={})
    message = str(caught.value)
    assert str(conf) in message
    assert "key_overrides" in message
    assert said in message


def test_config_good_key_overrides_are_read_as_written(tmp_path: Path) -> None:
    conf = tmp_path / "over.toml"
    conf.write_text('[key_overrides]\n"a.test" = {in_flight = 1, gap = 2.5}\n'
                    '"backend:substack" = {gap = 1}\n')
    assert load_settings(conf, environ={}).key_overrides == {
        "a.test": {"in_flight": 1, "gap": 2.5}, "backend:substack": {"gap": 1},
    }


def test_config_a_bad_key_override_fails_a_crawl_with_nothing_due(tmp_path: Path) -> None:
    conf = tmp_path / "over.toml"
    conf.write_text('key_overrides = {"a.test" = {in_flight = "two"}}\n')
    r = CliRunner().invoke(
        app, ["--db", f"sqlite:///{tmp_path}/x.db", "--config", str(conf), "crawl", "--once"],
        env={"FAIRFETCH_DB": None},
    )
    assert r.exit_code == 2
    assert str(conf) in r.output
    assert "Traceback" not in r.output
