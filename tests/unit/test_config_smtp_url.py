"""smtp_url holds the mail server's password: a value that cannot be used is refused when the
settings are read, naming the variable or file, with the password masked. It was read only
when a mail was to go, and the refusal printed the URL whole: `error: smtp_url
'smtp://u:s3cret@…:99999': bad port` on the terminal (and in cron's mail)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from fairfetch.cli import app
from fairfetch.config import load_settings
from fairfetch.errors import ConfigError

SECRET = "s3cret-pw"


@pytest.mark.parametrize(
    "url",
    [
        f"smtp://mailer:{SECRET}@127.0.0.1:99999",  # no such port
        f"smtpx://mailer:{SECRET}@127.0.0.1:25",  # no such scheme
        f"smtp://mailer:{SECRET}@:25",  # no host
        f"smtp://mailer:{SECRET}@127.0.0.1:2x5",  # not a port
    ],
)
def test_config_a_bad_smtp_url_is_refused_without_its_password(url: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(environ={"FAIRFETCH_SMTP_URL": url})
    message = str(caught.value)
    assert "FAIRFETCH_SMTP_URL" in message
    assert SECRET not in message
    assert "mailer:***@" in message


@pytest.mark.parametrize(
    "url",
    ["smtp://127.0.0.1:8025", "smtps://u:p%40ss@mail.example.org:465", "smtp://mail.example.org"],
)
def test_config_a_good_smtp_url_is_kept_as_written(url: str) -> None:
    assert load_settings(environ={"FAIRFETCH_SMTP_URL": url}).smtp_url == url


def test_config_a_bad_smtp_url_never_reaches_the_terminal(tmp_path: Path) -> None:
    r = CliRunner().invoke(
        app,
        ["--db", f"sqlite:///{tmp_path}/n.db", "notify", "send-due"],
        env={"FAIRFETCH_SMTP_URL": f"smtp://mailer:{SECRET}@127.0.0.1:99999"},
    )
    assert r.exit_code == 2
    assert "FAIRFETCH_SMTP_URL" in r.output
    assert SECRET not in r.output
