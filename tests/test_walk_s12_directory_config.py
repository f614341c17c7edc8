"""Settings a newcomer mistypes are refused in the operator's words, naming the setting, where
the value came from and the value."""

from __future__ import annotations

from pathlib import Path

import pytest

from fairfetch.config import load_settings
from fairfetch.errors import ConfigError


@pytest.mark.parametrize(
    ("variable", "value", "said"),
    [
        ("FAIRFETCH_PORT", "abc", "not a whole number: 'abc'"),
        ("FAIRFETCH_PER_KEY_GAP", "1,5", "not a number: '1,5'"),
    ],
)
def test_walk_s12_directory_a_number_that_is_not_one_is_said_plainly(
    variable: str, value: str, said: str
) -> None:
    """FAIRFETCH_PORT=abc said "invalid literal for int() with base 10: 'abc'"."""
    with pytest.raises(ConfigError) as caught:
        load_settings(environ={variable: value})
    message = str(caught.value)
    assert variable in message
    assert said in message
    assert "int()" not in message
    assert "float" not in message


def test_walk_s12_directory_a_table_for_a_number_in_the_file_is_said_plainly(
    tmp_path: Path,
) -> None:
    config = tmp_path / "fairfetch.toml"
    config.write_text("port = [8080]\n")
    said = r"'port' \(config file .*\): not a whole number: \[8080\]"
    with pytest.raises(ConfigError, match=said):
        load_settings(config, environ={})


def test_walk_s12_directory_numbers_still_read() -> None:
    settings = load_settings(environ={"FAIRFETCH_PORT": " 9000 ", "FAIRFETCH_PER_KEY_GAP": "1.5"})
    assert (settings.port, settings.per_key_gap) == (9000, 1.5)
