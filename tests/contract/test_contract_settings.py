"""Every setting has a config-file key and an environment variable (DESIGN.md: "Every setting
also has a config-file key"); the notifier's knobs are settings like the others."""

from __future__ import annotations

import dataclasses
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from fairfetch.config import Settings, env_name, load_settings
from fairfetch.errors import ConfigError
from fairfetch.notify.options import NOTIFY_SETTINGS, NotifyOptions

FIELDS = [f for f in dataclasses.fields(Settings) if f.name != "key_overrides"]
DEFAULTS = Settings()


def _other_value(name: str) -> tuple[Any, str, Any]:
    """A value different from the default: (TOML literal, environment text, expected)."""
    default = getattr(DEFAULTS, name)
    if isinstance(default, bool):
        return ("false" if default else "true"), ("0" if default else "1"), not default
    if isinstance(default, int):
        return str(default + 3), str(default + 3), default + 3
    if isinstance(default, float) or default is None:
        return "1.5", "1.5", 1.5
    if isinstance(default, tuple):
        one, two = ("10.0.0.0/8", "fd00::/8") if name == "allow_networks" else (
            "*.a.test:127.0.0.1", "b.test:127.0.0.2")
        return f'["{one}", "{two}"]', f"{one}, {two}", (one, two)
    if name.endswith("_url") and name != "db":
        # each URL setting in a form it can be used in (smtp_url is read as an SMTP server)
        scheme = "smtp" if name == "smtp_url" else "https"
        value = f"{scheme}://x-" + name.replace("_", "-") + ".example.test"
        return f'"{value}"', value, value
    if name == "mail_from":  # read as one address (checked when the settings are read)
        return '"x-mail-from@example.test"', "x-mail-from@example.test", "x-mail-from@example.test"
    return '"x-' + name + '"', "x-" + name, "x-" + name


@pytest.mark.parametrize("name", [f.name for f in FIELDS])
def test_every_setting_has_a_config_key_and_an_environment_variable(
    name: str, tmp_path: Path
) -> None:
    toml, text, expected = _other_value(name)
    assert getattr(DEFAULTS, name) != expected
    conf = tmp_path / "c.toml"
    conf.write_text(f"[fairfetch]\n{name} = {toml}\n")
    assert getattr(load_settings(conf, environ={}), name) == expected
    assert getattr(load_settings(None, environ={env_name(name): text}), name) == expected
    # the environment beats the file; a flag beats both
    assert getattr(load_settings(conf, environ={env_name(name): text}), name) == expected
    assert getattr(load_settings(conf, environ={}, **{name: getattr(DEFAULTS, name)}), name) == (
        getattr(DEFAULTS, name)
    )


def test_the_contract_settings_exist_with_their_documented_defaults() -> None:
    s = load_settings(None, environ={})
    assert s.db == "sqlite:///fairfetch.db"
    assert s.allow_networks == ()  # all private ranges refused by default
    assert s.resolve == ()
    assert s.public_url
    assert s.smtp_url.startswith("smtp")
    assert s.admin_token == ""
    env = {
        "FAIRFETCH_ALLOW_NETWORKS": "127.0.0.1/32,10.0.0.0/8",
        "FAIRFETCH_RESOLVE": "*.test:127.0.0.1, a.example:127.0.0.2",
        "FAIRFETCH_PUBLIC_URL": "https://ff.example.test",
        "FAIRFETCH_SMTP_URL": "smtps://u:p@mail.example.test:465",
        "FAIRFETCH_ADMIN_TOKEN": "sesame",
    }
    s = load_settings(None, environ=env)
    assert s.allow_networks == ("127.0.0.1/32", "10.0.0.0/8")
    assert s.resolve == ("*.test:127.0.0.1", "a.example:127.0.0.2")
    assert (s.public_url, s.smtp_url, s.admin_token) == (
        "https://ff.example.test", "smtps://u:p@mail.example.test:465", "sesame")


def test_notify_knobs_are_settings_with_the_documented_environment_names() -> None:
    names = {env_name(n) for n in NOTIFY_SETTINGS}
    assert names == {
        "FAIRFETCH_NOTIFY_RATE", "FAIRFETCH_NOTIFY_BATCH", "FAIRFETCH_NOTIFY_SMTP_TIMEOUT",
        "FAIRFETCH_NOTIFY_POLL", "FAIRFETCH_NOTIFY_BEHIND_NEWEST_DAYS",
        "FAIRFETCH_NOTIFY_MAX_AGE_DAYS", "FAIRFETCH_NOTIFY_POLICY_GIVE_UP_DAYS",
    }  # fmt: skip
    o = NotifyOptions.from_settings(Settings())
    assert o == NotifyOptions.from_env({})
    assert (o.rate, o.batch, o.smtp_timeout, o.poll_seconds) == (20.0, 200, 30.0, 15.0)
    assert (o.newness.behind_newest, o.newness.max_age) == (timedelta(days=7), timedelta(days=14))


def test_notify_knobs_from_a_config_file(tmp_path: Path) -> None:
    conf = tmp_path / "n.toml"
    conf.write_text(
        "notify_rate = 0\nnotify_batch = 7\nnotify_smtp_timeout = 4.5\nnotify_poll = 2\n"
        'notify_behind_newest_days = ""\nnotify_max_age_days = 3\n'
    )
    o = NotifyOptions.from_settings(load_settings(conf, environ={}))
    assert (o.rate, o.batch, o.smtp_timeout, o.poll_seconds) == (0.0, 7, 4.5, 2.0)
    assert o.newness.behind_newest is None  # empty: the guard is off
    assert o.newness.max_age == timedelta(days=3)


def test_notify_policy_give_up_is_a_setting() -> None:
    """How long a policy-refused mail is retried is the operator's call (a delisting can take
    longer than the default 3 days): a setting like the other notify knobs, not a constant."""
    assert NotifyOptions.from_settings(Settings()).policy_give_up_after == timedelta(days=3)
    o = NotifyOptions.from_env({"FAIRFETCH_NOTIFY_POLICY_GIVE_UP_DAYS": "0.5"})
    assert o.policy_give_up_after == timedelta(hours=12)
    with pytest.raises(ConfigError) as caught:
        load_settings(None, environ={"FAIRFETCH_NOTIFY_POLICY_GIVE_UP_DAYS": "0"})
    assert "FAIRFETCH_NOTIFY_POLICY_GIVE_UP_DAYS" in str(caught.value)


def test_notify_from_env_reads_the_same_names_and_only_those() -> None:
    env = {
        "FAIRFETCH_NOTIFY_RATE": "5", "FAIRFETCH_NOTIFY_MAX_AGE_DAYS": "",
        "FAIRFETCH_NOTIFY_POLL": "1",
        # a broken unrelated setting must not fail the crawler's in-transaction hook
        "FAIRFETCH_PORT": "not-a-port",
    }  # fmt: skip
    o = NotifyOptions.from_env(env)
    assert (o.rate, o.poll_seconds, o.newness.max_age) == (5.0, 1.0, None)
    assert o == NotifyOptions.from_settings(
        load_settings(None, environ={k: v for k, v in env.items() if k != "FAIRFETCH_PORT"})
    )


def test_an_empty_obey_robots_is_refused_not_read_as_off(tmp_path: Path) -> None:
    """An emptied variable (``FAIRFETCH_OBEY_ROBOTS=``) read as "false" switched robots.txt
    off without a word: an operator clearing it expects the default, not an impolite crawl."""
    with pytest.raises(ConfigError) as caught:
        load_settings(None, environ={"FAIRFETCH_OBEY_ROBOTS": ""})
    assert "FAIRFETCH_OBEY_ROBOTS" in str(caught.value)
    conf = tmp_path / "r.toml"
    conf.write_text('obey_robots = " "\n')
    with pytest.raises(ConfigError) as caught:
        load_settings(conf, environ={})
    assert "obey_robots" in str(caught.value)
    assert load_settings(None, environ={"FAIRFETCH_OBEY_ROBOTS": "off"}).obey_robots is False


@pytest.mark.parametrize(
    ("var", "raw"),
    [("FAIRFETCH_NOTIFY_RATE", "fast"), ("FAIRFETCH_NOTIFY_BATCH", "1.5"),
     ("FAIRFETCH_NOTIFY_POLL", "nan"), ("FAIRFETCH_PORT", "x"), ("FAIRFETCH_OBEY_ROBOTS", "maybe"),
     # checked when read: found only at the first request, they hung `feeds add`
     ("FAIRFETCH_ALLOW_NETWORKS", "notacidr"), ("FAIRFETCH_RESOLVE", "garbage"),
     ("FAIRFETCH_RESOLVE", "*.test:notanip")],
)  # fmt: skip
def test_bad_values_name_the_variable(var: str, raw: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(None, environ={var: raw})
    assert var in str(caught.value)
    assert raw in str(caught.value)


@pytest.mark.parametrize("bad", ["example.org", "ftp://example.org", "https://", "/relative"])
def test_public_url_must_be_an_http_url_with_a_host(bad: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(None, environ={"FAIRFETCH_PUBLIC_URL": bad})
    assert "FAIRFETCH_PUBLIC_URL" in str(caught.value)
    assert load_settings(None, environ={"FAIRFETCH_PUBLIC_URL": "https://ff.example/app"}) \
        .public_url == "https://ff.example/app"


@pytest.mark.parametrize(
    ("name", "raw"),
    [("per_key_in_flight", "0"), ("global_in_flight", "-1"), ("total_timeout", "0"),
     ("min_interval", "-5"), ("per_key_gap", "-0.5"), ("notify_rate", "-1"), ("port", "70000"),
     ("notify_max_age_days", "-2"), ("batch_size", "0")],
)  # fmt: skip
def test_numbers_out_of_range_are_refused_when_read(name: str, raw: str, tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(None, environ={env_name(name): raw})
    assert env_name(name) in str(caught.value)
    conf = tmp_path / "r.toml"
    conf.write_text(f"{name} = {raw}\n")
    with pytest.raises(ConfigError) as caught:
        load_settings(conf, environ={})
    assert name in str(caught.value)


@pytest.mark.parametrize(("name", "raw"), [("per_key_gap", "0"), ("parse_processes", "0"),
                                           ("notify_rate", "0"), ("port", "0")])  # fmt: skip
def test_zero_where_zero_means_something(name: str, raw: str) -> None:
    assert getattr(load_settings(None, environ={env_name(name): raw}), name) == 0
