"""Spaces around a text setting (a .env line ``FAIRFETCH_PUBLIC_URL=https://x.test ``, a quoted
value with a space) are not part of it. public_url passed its check (made on the stripped
value) and was kept with them: every WebSub callback read 'http://127.0.0.1:8080 /websub/…'
and every link in a mail was broken; ``FAIRFETCH_DB=' sqlite:///x.db'`` was 'not a valid URL'."""

from __future__ import annotations

from pathlib import Path

import pytest

from fairfetch.config import load_settings
from fairfetch.errors import ConfigError
from fairfetch.websub.hub_client import callback_url


@pytest.mark.parametrize(
    ("var", "name", "value"),
    [
        ("FAIRFETCH_PUBLIC_URL", "public_url", "https://ff.example.test"),
        ("FAIRFETCH_DB", "db", "sqlite:///spaces.db"),
        ("FAIRFETCH_SMTP_URL", "smtp_url", "smtp://127.0.0.1:2525"),
        ("FAIRFETCH_ADMIN_TOKEN", "admin_token", "tok"),
        ("FAIRFETCH_HOST", "host", "127.0.0.1"),
    ],
)
def test_config_spaces_around_a_text_setting_are_not_kept(var: str, name: str, value: str) -> None:
    assert getattr(load_settings(environ={var: f"  {value} "}), name) == value


def test_config_a_public_url_with_spaces_builds_working_callbacks() -> None:
    settings = load_settings(environ={"FAIRFETCH_PUBLIC_URL": " https://ff.example.test "})
    assert callback_url(settings.public_url, "T") == "https://ff.example.test/websub/callback/T"


def test_config_spaces_inside_a_text_setting_are_kept() -> None:
    agent = "fairfetch/1 (+https://ff.example.test/contact)"
    assert load_settings(environ={"FAIRFETCH_USER_AGENT": agent}).user_agent == agent


@pytest.mark.parametrize("literal", ["1979-05-27T07:32:00Z", "1979-05-27", "07:32:00"])
def test_config_a_toml_date_for_a_text_setting_is_refused_naming_the_file(
    literal: str, tmp_path: Path
) -> None:
    """TOML reads an unquoted date as a date: ``public_url = 2026-01-01`` became the text
    '2026-01-01' (refused later, or a database named '1979-05-27 07:32:00+00:00', refused by
    the store without a word of the file). It is refused as not text, naming the file."""
    conf = tmp_path / "dates.toml"
    conf.write_text(f"mail_from = {literal}\n")
    with pytest.raises(ConfigError) as caught:
        load_settings(conf, environ={})
    assert str(conf) in str(caught.value)
    assert "mail_from" in str(caught.value)
