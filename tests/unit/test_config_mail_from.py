"""mail_from is the sender of every mail (the From header and the SMTP envelope): a value that
is no single address is refused when the settings are read, naming the variable or file. It
was taken as written: ``FAIRFETCH_MAIL_FROM=nobody`` started the notifier, and every mail then
went out as ``MAIL FROM:<nobody>``, refused by the mail server one by one, long after start-up
and far from the setting that caused it."""

from __future__ import annotations

from pathlib import Path

import pytest

from fairfetch.config import load_settings
from fairfetch.errors import ConfigError


@pytest.mark.parametrize(
    "value",
    [
        "nobody",  # no domain
        "Fairfetch <>",  # a name, no address
        "@example.org",  # no local part
        "news@",  # no domain
        "a@example.org, b@example.org",  # two senders
        "news@exa mple.org",  # a space in the domain
        "news@-bad-.example.org",  # no host name
    ],
)
def test_config_a_mail_from_that_is_no_address_is_refused(value: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(environ={"FAIRFETCH_MAIL_FROM": value})
    assert "FAIRFETCH_MAIL_FROM" in str(caught.value)
    assert "mail_from" in str(caught.value)


def test_config_a_bad_mail_from_in_a_file_names_the_file(tmp_path: Path) -> None:
    config = tmp_path / "fairfetch.toml"
    config.write_text('[fairfetch]\nmail_from = "nobody"\n')
    with pytest.raises(ConfigError) as caught:
        load_settings(config, environ={})
    assert str(config) in str(caught.value)


@pytest.mark.parametrize(
    "value",
    [
        "fairfetch <fairfetch@localhost>",  # the default: a one-label host is a host
        "news@example.org",
        '"Acme News" <news@example.org>',
        "Zoë <zoe@bücher.example>",
    ],
)
def test_config_a_sender_address_is_kept_as_written(value: str) -> None:
    assert load_settings(environ={"FAIRFETCH_MAIL_FROM": value}).mail_from == value
