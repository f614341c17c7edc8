"""FAIRFETCH_RESOLVE's host part is a host name (or ``*.`` and a domain). One that can never be
a URL's host (a space, a slash, a URL pasted whole) was taken without a word: the override
never applied, and the name went to the system's resolver instead of the address the operator
named. A ConfigError naming the entry says so when the setting is read."""

from __future__ import annotations

import pytest

from fairfetch.config import load_settings
from fairfetch.errors import ConfigError
from fairfetch.net.perimeter import Resolver, parse_resolve_entries


@pytest.mark.parametrize(
    "bad",
    [
        "exa mple.com:127.0.0.1",
        "example.com/:127.0.0.1",
        "example.com/feed:127.0.0.1",
        "user@example.com:127.0.0.1",
        "*.exa mple.com:127.0.0.1",
        "example..com:127.0.0.1",
    ],
)
def test_a_host_part_that_is_no_host_name_is_a_config_error_naming_the_entry(bad: str) -> None:
    with pytest.raises(ConfigError, match="resolve") as info:
        parse_resolve_entries([bad])
    assert repr(bad) in str(info.value)


def test_the_environment_variable_and_the_entry_are_named(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FAIRFETCH_RESOLVE", "ok.test:127.0.0.1,exa mple.com:127.0.0.1")
    with pytest.raises(ConfigError) as info:
        load_settings(None)
    assert "FAIRFETCH_RESOLVE" in str(info.value)
    assert "exa mple.com:127.0.0.1" in str(info.value)


def test_the_wildcard_without_a_domain_says_so() -> None:
    with pytest.raises(ConfigError, match="the wildcard needs a domain"):
        parse_resolve_entries(["*.:127.0.0.1"])


@pytest.mark.parametrize(
    ("entry", "host"),
    [
        ("under_score.example.com:127.0.0.1", "under_score.example.com"),
        ("Bücher.DE.:127.0.0.1", "xn--bcher-kva.de"),
        ("*.x-y.test:127.0.0.1", "a.x-y.test"),
        ("localhost:127.0.0.1", "localhost"),
    ],
)
def test_real_host_names_still_override(entry: str, host: str) -> None:
    assert Resolver([entry]).override(host) == ("127.0.0.1",)
