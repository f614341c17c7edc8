"""Which hubs can call us back: a callback on a loopback or private address is reachable only
from a hub on the same machine or the same private network. The default ``public_url`` is
``http://127.0.0.1:8080``: a real hub told to verify there calls its own loopback (and the
subscription hangs in ``pending``, re-requested every hour)."""

from __future__ import annotations

import pytest

from fairfetch.websub.reach import callback_scope, unreachable_callback

LOOPBACK_CB = "http://127.0.0.1:8080"


@pytest.mark.parametrize(
    ("public_url", "scope"),
    [
        ("http://127.0.0.1:8080", "loopback"),
        ("http://127.9.9.9/", "loopback"),
        ("http://localhost:8080/ff", "loopback"),
        ("http://LocalHost./", "loopback"),
        ("http://app.localhost/", "loopback"),
        ("http://[::1]:8080/", "loopback"),
        ("http://10.1.2.3/", "private"),
        ("http://192.168.0.5:8080/", "private"),
        ("http://[fd00::5]/", "private"),
        ("http://169.254.1.1/", "private"),
        ("https://ff.example.org/", None),  # a name: we cannot know, so we trust the operator
        ("https://203.0.113.9/", "private"),  # documentation range: not globally routable
        ("https://8.8.8.8/", None),
    ],
)
def test_websub_callback_scope(public_url: str, scope: str | None) -> None:
    assert callback_scope(public_url) == scope


@pytest.mark.parametrize(
    ("public_url", "hub_addresses", "refused"),
    [
        # loopback callback: only a hub on this machine reaches it
        (LOOPBACK_CB, ["127.0.0.1"], False),
        (LOOPBACK_CB, ["127.0.0.2", "::1"], False),
        (LOOPBACK_CB, ["192.0.2.7"], True),
        (LOOPBACK_CB, ["10.0.0.7"], True),
        (LOOPBACK_CB, ["127.0.0.1", "192.0.2.7"], True),  # one far address is enough to miss
        (LOOPBACK_CB, [], True),  # a hub we cannot place is not on this machine
        # private callback: a hub on a private network may reach it, a public one may not
        ("http://10.1.2.3/", ["10.9.9.9"], False),
        ("http://10.1.2.3/", ["127.0.0.1"], False),
        ("http://10.1.2.3/", ["8.8.4.4"], True),
        ("http://10.1.2.3/", [], True),
        # a public name or address: every hub may try
        ("https://ff.example.org/", ["8.8.4.4"], False),
        ("https://ff.example.org/", [], False),
        ("https://8.8.8.8/", ["127.0.0.1"], False),
    ],
)
def test_websub_unreachable_callback(
    public_url: str, hub_addresses: list[str], refused: bool
) -> None:
    why = unreachable_callback(public_url, "https://hub.example.net/", hub_addresses)
    assert (why is not None) == refused
    if why is not None:
        # the operator learns what to change and which hub could not be used
        assert "public_url" in why
        assert public_url.rstrip("/").split("//")[1].split("/")[0] in why
        assert "hub.example.net" in why
