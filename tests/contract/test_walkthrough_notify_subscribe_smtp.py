"""``notify subscribe`` and a mail setting it cannot use.

- A ``smtp_url`` that is not smtp:// or smtps:// was refused only after the subscription and
  its confirmation mail were stored: the command said "error" and exited 2, yet left a pending
  subscription and a queued mail behind, and running it again (with the setting fixed) answered
  "a confirmation mail went to … less than an hour ago … no new mail" — though none ever went.
  The setting is checked first: nothing is written.
"""

from __future__ import annotations

from fairfetch.testing import Testbed

from .conftest import Cli, assert_clean_error


def test_walkthrough_subscribe_checks_the_mail_setting_before_writing(
    cli: Cli, tb: Testbed
) -> None:
    [spec] = tb.catalog(n=1, behaviours=["podcast"])
    r = cli("notify", "subscribe", "r@example.test", spec.url,
            env={"FAIRFETCH_SMTP_URL": "http://mail.example.test"})  # fmt: skip
    assert_clean_error(r, "smtp_url", "http://mail.example.test")
    assert cli.json("notify", "list", "--json") == []
    assert cli.json("notify", "outbox", "--json") == []

