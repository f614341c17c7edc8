"""SMTP URLs and the notifier's environment knobs."""

from __future__ import annotations

from datetime import timedelta

import pytest

from fairfetch.errors import ConfigError
from fairfetch.notify.options import NotifyOptions
from fairfetch.notify.smtp import SmtpConfig


def test_notify_smtp_url_forms():
    c = SmtpConfig.parse("smtp://user%40x:p%3Ass@mail.example.test:587")
    assert (c.host, c.port, c.implicit_tls, c.username, c.password) == (
        "mail.example.test", 587, False, "user@x", "p:ss")
    c = SmtpConfig.parse("smtps://mail.example.test")
    assert (c.port, c.implicit_tls, c.username) == (465, True, None)
    assert SmtpConfig.parse("smtp://127.0.0.1").port == 25


@pytest.mark.parametrize("bad", ["http://mail.example.test", "smtp://", "mail.example.test:25",
                                 "smtp://h:notaport"])
def test_notify_smtp_url_rejects(bad):
    with pytest.raises(ConfigError):
        SmtpConfig.parse(bad)


def test_notify_options_from_env():
    o = NotifyOptions.from_env({})
    assert (o.rate, o.batch, o.newness.behind_newest, o.newness.max_age) == (
        20.0, 200, timedelta(days=7), timedelta(days=14))
    o = NotifyOptions.from_env({
        "FAIRFETCH_NOTIFY_RATE": "0", "FAIRFETCH_NOTIFY_BEHIND_NEWEST_DAYS": "",
        "FAIRFETCH_NOTIFY_MAX_AGE_DAYS": "2.5", "FAIRFETCH_NOTIFY_BATCH": "10",
    })
    assert (o.rate, o.batch, o.newness.behind_newest, o.newness.max_age) == (
        0.0, 10, None, timedelta(days=2.5))
    with pytest.raises(ConfigError):
        NotifyOptions.from_env({"FAIRFETCH_NOTIFY_RATE": "fast"})
