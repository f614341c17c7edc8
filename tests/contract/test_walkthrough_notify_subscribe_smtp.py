"""``notify subscribe`` and a mail setting it cannot use, or a mail server that is away.

- A ``smtp_url`` that is not smtp:// or smtps:// was refused only after the subscription and
  its confirmation mail were stored: the command said "error" and exited 2, yet left a pending
  subscription and a queued mail behind, and running it again (with the setting fixed) answered
  "a confirmation mail went to … less than an hour ago … no new mail" — though none ever went.
  The setting is checked first: nothing is written.
- With the mail server away, a second ``subscribe`` within the hour still said the first mail
  "went": it is queued, not sent, and the message says so.
"""

from __future__ import annotations

import socket

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


def test_walkthrough_subscribe_again_never_says_an_unsent_mail_went(cli: Cli, tb: Testbed) -> None:
    [spec] = tb.catalog(n=1, behaviours=["podcast"])
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))  # bound, not listening: the server is away
        down = {"FAIRFETCH_SMTP_URL": f"smtp://127.0.0.1:{closed.getsockname()[1]}"}
        first = cli("notify", "subscribe", "r@example.test", spec.url, env=down)
        assert first.exit_code == 0, first.output
        assert "queued" in first.stdout
        again = cli("notify", "subscribe", "r@example.test", spec.url, env=down)
    assert again.exit_code == 0, again.output
    assert "went" not in again.stdout, again.stdout
    assert "queued" in again.stdout, again.stdout
    [row] = cli.json("notify", "outbox", "--json")
    assert (row["kind"], row["status"]) == ("confirm", "pending")
