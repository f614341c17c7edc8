"""A config-file value of the wrong TOML type is refused, naming the file and the key, never
bent into another value: ``port = 8080.5`` was port 8080, ``db = 3`` the database file "3"."""

from __future__ import annotations

from pathlib import Path

import pytest

from fairfetch.config import load_settings
from fairfetch.errors import ConfigError


@pytest.mark.parametrize(
    ("key", "toml"),
    [("port", "8080.5"), ("per_key_in_flight", "2.5"), ("dead_after", "9.9"),
     ("max_body_bytes", "1e3")],
)  # fmt: skip
def test_contract_config_a_fraction_for_a_whole_number_is_refused(
    key: str, toml: str, tmp_path: Path
) -> None:
    conf = tmp_path / "frac.toml"
    conf.write_text(f"{key} = {toml}\n")
    if toml == "1e3":  # a whole number written as a float is that number
        assert getattr(load_settings(conf, environ={}), key) == 1000
        return
    with pytest.raises(ConfigError) as caught:
        load_settings(conf, environ={})
    assert key in str(caught.value)
    assert str(conf) in str(caught.value)


@pytest.mark.parametrize(
    ("key", "toml"),
    [("db", "3"), ("user_agent", '["a", "b"]'), ("admin_token", "true"),
     ("smtp_url", "{ host = 'x' }")],
)  # fmt: skip
def test_contract_config_a_non_text_value_for_a_text_setting_is_refused(
    key: str, toml: str, tmp_path: Path
) -> None:
    conf = tmp_path / "text.toml"
    conf.write_text(f"{key} = {toml}\n")
    with pytest.raises(ConfigError) as caught:
        load_settings(conf, environ={})
    assert key in str(caught.value)
    assert str(conf) in str(caught.value)


@pytest.mark.parametrize("name", ["db", "host", "smtp_url", "user_agent", "mail_from"])
@pytest.mark.parametrize("value", ["", "   "])
def test_contract_config_an_empty_text_setting_is_refused_naming_its_variable(
    name: str, value: str
) -> None:
    """FAIRFETCH_DB= was 'database URL '' is not a valid URL' (which variable?), and an empty
    host would have served on every interface: a setting with a default is never empty."""
    var = f"FAIRFETCH_{name.upper()}"
    with pytest.raises(ConfigError) as caught:
        load_settings(environ={var: value})
    assert var in str(caught.value)
    assert "empty" in str(caught.value)


def test_contract_config_an_empty_admin_token_is_no_token() -> None:
    assert load_settings(environ={"FAIRFETCH_ADMIN_TOKEN": ""}).admin_token == ""


@pytest.mark.parametrize("path", ["", "  "])
def test_contract_config_an_empty_config_path_is_named_as_empty(path: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(path, environ={})
    assert "'.'" not in str(caught.value)
    assert "empty" in str(caught.value)


def test_contract_config_an_empty_variable_a_later_source_replaces_is_not_read() -> None:
    """FAIRFETCH_DB= beside --db (a wrapper clearing the variable) is no mistake."""
    settings = load_settings(environ={"FAIRFETCH_DB": ""}, db="sqlite:///given.db")
    assert settings.db == "sqlite:///given.db"
