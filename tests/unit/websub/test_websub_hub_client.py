"""The subscription form and the callback URL (pure parts of hub_client)."""

from __future__ import annotations

import pytest

from fairfetch.websub.hub_client import callback_url, subscription_form


def test_websub_callback_url_on_public_url() -> None:
    assert callback_url("http://ff.example", "tok") == "http://ff.example/websub/callback/tok"
    assert callback_url("https://ff.example/base/", "tok") == (
        "https://ff.example/base/websub/callback/tok")


def test_websub_callback_url_keeps_query_string() -> None:
    assert callback_url("https://ff.example/x?instance=a&b=1", "tok") == (
        "https://ff.example/x/websub/callback/tok?instance=a&b=1")


def test_websub_subscribe_form_fields() -> None:
    form = subscription_form("subscribe", callback="http://cb/", topic="http://t/",
                             lease_seconds=3600, secret="s")
    assert form == {"hub.callback": "http://cb/", "hub.mode": "subscribe",
                    "hub.topic": "http://t/", "hub.lease_seconds": "3600", "hub.secret": "s"}


def test_websub_unsubscribe_form_has_no_lease_or_secret() -> None:
    form = subscription_form("unsubscribe", callback="http://cb/", topic="http://t/",
                             lease_seconds=3600, secret="s")
    assert form == {"hub.callback": "http://cb/", "hub.mode": "unsubscribe",
                    "hub.topic": "http://t/"}


def test_websub_secret_must_be_under_200_bytes() -> None:
    subscription_form("subscribe", callback="c", topic="t", secret="x" * 199)
    with pytest.raises(ValueError, match="200 bytes"):
        subscription_form("subscribe", callback="c", topic="t", secret="x" * 200)
    with pytest.raises(ValueError, match="200 bytes"):
        subscription_form("subscribe", callback="c", topic="t", secret="\u00e9" * 100)
