"""``notify list`` and ``notify outbox`` in the terminal say what --json says.

- a weekly subscription showed as 'weekly 08h UTC' whatever its day: a Monday and a Tuesday
  digest read the same;
- the outbox cut a reader's address to 'ana.long-name@exa…' through a pipe (80 columns), so two
  readers of one domain could not be told apart, and the server's reason for a failure to
  'SMTPConnec…'; both are folded, like the addresses of ``notify list``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from fairfetch.cli import app

FEED = "http://tables.example.test/feed.xml"


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("FAIRFETCH_DB", f"sqlite:///{tmp_path}/t.db")
    # Nothing listens on the discard port: confirmation mails stay queued, nothing leaves.
    monkeypatch.setenv("FAIRFETCH_SMTP_URL", "smtp://127.0.0.1:9")

    def run(*args: str) -> Result:
        r = CliRunner().invoke(app, list(args))
        assert r.exit_code == 0, (args, r.output, r.exception)
        return r

    return run


def test_cli_notify_list_shows_the_weekday_of_a_weekly_digest(cli) -> None:  # type: ignore[no-untyped-def]
    cli("notify", "subscribe", "mon@example.test", FEED, "--mode", "weekly", "--weekday", "mon")
    cli("notify", "subscribe", "tue@example.test", FEED, "--mode", "weekly", "--weekday", "tue")
    cli("notify", "subscribe", "day@example.test", FEED, "--mode", "daily", "--hour", "7")
    out = cli("notify", "list").stdout
    lines = {who: next(ln for ln in out.splitlines() if f"{who}@" in ln)
             for who in ("mon", "tue", "day")}
    assert "mon" in lines["mon"].split("│")[4], out
    assert "tue" in lines["tue"].split("│")[4], out
    assert "daily 07h" in lines["day"], out


def test_cli_notify_outbox_folds_addresses_instead_of_cutting_them(cli) -> None:  # type: ignore[no-untyped-def]
    a = "ana.long-name-for-a-reader@example.test"
    b = "ana.long-name-for-a-reader@example.org"
    cli("notify", "subscribe", a, FEED)
    cli("notify", "subscribe", b, FEED)
    out = cli("notify", "outbox").stdout
    assert "…" not in out, out
    column = "".join(ln.split("│")[3].strip() for ln in out.splitlines() if ln.count("│") >= 8)
    assert a in column, out
    assert b in column, out


def test_cli_notify_list_shows_an_ended_subscriptions_status_whole(cli) -> None:  # type: ignore[no-untyped-def]
    """Through a pipe (80 columns) the status of an ended subscription read 'unsubscrib…':
    the one column a reader's state is in was the one cut."""
    cli("notify", "subscribe", "ana.long-name-for-a-reader@example.test", FEED,
        "--mode", "daily", "--hour", "7", "--tz", "America/Argentina/Buenos_Aires",
        "--except", "sport,ads")
    cli("notify", "unsubscribe", "ana.long-name-for-a-reader@example.test", FEED)
    out = cli("notify", "list").stdout
    assert "…" not in out, out
    statuses = [ln.split("│")[6].strip() for ln in out.splitlines() if ln.count("│") == 7]
    assert "unsubscribed" in statuses, out
