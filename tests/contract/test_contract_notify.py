"""`fairfetch notify …` as the contract lists it: double opt-in through a link on
FAIRFETCH_PUBLIC_URL, nothing sent before confirmation, list/outbox JSON, bad input exit 2 with
nothing lost. Mail goes to a real SMTP sink on loopback."""

from __future__ import annotations

import re
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fairfetch.notify.sink import CapturedMail, MailSink
from fairfetch.testing import Testbed

from .conftest import Cli, assert_clean_error
from .test_contract_feeds import _time

PUBLIC = "https://ff-public.example.test"


@pytest.fixture
def sink() -> Iterator[MailSink]:
    with MailSink() as s:
        yield s


@pytest.fixture
def ncli(tb: Testbed, db_url: str, sink: MailSink, tmp_path: Path) -> Cli:
    """The CLI with mail settings taken from a config file (every setting has a file key)."""
    conf = tmp_path / "notify.toml"
    conf.write_text(
        f'[fairfetch]\nsmtp_url = "{sink.smtp_url}"\npublic_url = "{PUBLIC}"\n'
        "notify_rate = 0\n"
    )
    base = Cli({**tb.env(), "FAIRFETCH_DB": db_url})

    class WithConfig(Cli):
        def __call__(self, *args: str, env: dict[str, str] | None = None) -> Any:
            return super().__call__("--config", str(conf), *args, env=env)

    return WithConfig(base.env)


def _body(mail: CapturedMail) -> str:
    msg = mail.message
    part = next(msg.iter_parts()) if msg.is_multipart() else msg
    return str(part.get_content())


def _token(mail: CapturedMail) -> str:
    found = re.search(re.escape(PUBLIC) + r"/confirm/(\S+)", _body(mail))
    assert found, _body(mail)
    return found.group(1)


def test_double_opt_in_and_nothing_before_confirmation(
    ncli: Cli, tb: Testbed, sink: MailSink
) -> None:
    [spec] = tb.catalog(n=1, behaviours=["growing"])
    ncli.ok("feeds", "add", spec.url)  # first crawl: the backlog, news for nobody
    ncli.ok("notify", "subscribe", "Confirmed@Example.test", spec.url)
    ncli.ok("notify", "subscribe", "pending@example.test", spec.url, "--mode", "realtime")
    assert sorted(m.rcpt_to[0] for m in sink.mails) == [
        "confirmed@example.test", "pending@example.test"]
    confirmed_mail = next(m for m in sink.mails if m.rcpt_to[0] == "confirmed@example.test")
    ncli.ok("notify", "confirm", _token(confirmed_mail))
    subs = {s["email"]: s for s in ncli.json("notify", "list", "--json")}
    assert (subs["confirmed@example.test"]["status"], subs["pending@example.test"]["status"]) == (
        "active", "pending")
    _time(subs["confirmed@example.test"]["confirmed_at"])
    assert subs["pending@example.test"]["confirmed_at"] is None

    tb.clock.advance(3 * 3600)  # the growing feed publishes
    refreshed = ncli.json("feeds", "refresh", spec.url, "--json")
    assert refreshed["new_entries"] > 0
    sent_before = len(sink.mails)
    r = ncli("notify", "send-due", "--json")
    assert r.exit_code == 0, r.output
    new = sink.mails[sent_before:]
    assert new, "the confirmed reader gets the new items"
    assert {m.rcpt_to[0] for m in new} == {"confirmed@example.test"}
    # the outbox says what was sent, with ISO UTC times
    rows = ncli.json("notify", "outbox", "--json")
    assert {"id", "kind", "email", "status", "due_at", "sent_at", "attempts", "subject"} <= set(
        rows[0])
    for row in rows:
        _time(row["due_at"])
        _time(row["sent_at"])
    assert all(r["email"] != "pending@example.test" or r["kind"] == "confirm" for r in rows)
    assert "sent" in ncli.ok("notify", "outbox").stdout
    # a second send-due sends nothing twice
    again = ncli.json("notify", "send-due", "--json")
    assert again["sent"] == 0


def test_subscribe_options_list_and_unsubscribe(ncli: Cli, tb: Testbed, sink: MailSink) -> None:
    [spec] = tb.catalog(n=1, behaviours=["podcast"])
    ncli.ok("notify", "subscribe", "d@example.test", spec.url, "--mode", "daily", "--hour", "7",
            "--tz", "Europe/Paris", "--only", "Tech,Science")  # fmt: skip
    ncli.ok("notify", "subscribe", "w@example.test", spec.url, "--mode", "weekly", "--hour", "18",
            "--weekday", "fri", "--tz", "America/New_York", "--except", "Sport")  # fmt: skip
    subs = {s["email"]: s for s in ncli.json("notify", "list", "--json")}
    d, w = subs["d@example.test"], subs["w@example.test"]
    assert (d["mode"], d["hour"], d["tz"], d["only"], d["except"]) == (
        "daily", 7, "Europe/Paris", ["tech", "science"], [])
    assert (w["mode"], w["hour"], w["weekday"], w["tz"], w["except"]) == (
        "weekly", 18, 4, "America/New_York", ["sport"])
    for s in (d, w):
        assert s["feed_url"] == spec.url
        assert s["status"] == "pending"
        _time(s["created_at"])
    assert "email" in ncli.ok("notify", "list").stdout

    r = ncli("notify", "unsubscribe", "w@example.test", spec.url)
    assert r.exit_code == 0, r.output
    statuses = {s["email"]: s["status"] for s in ncli.json("notify", "list", "--json")}
    assert statuses == {"d@example.test": "pending", "w@example.test": "unsubscribed"}


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["--mode", "hourly"], "hourly"),
        (["--mode", "daily", "--hour", "24"], "24"),
        (["--mode", "weekly", "--weekday", "funday"], "funday"),
        (["--mode", "daily", "--tz", "Mars/Olympus"], "Mars/Olympus"),
    ],
)
def test_bad_subscribe_options_exit_2_and_change_nothing(
    ncli: Cli, tb: Testbed, sink: MailSink, args: list[str], named: str
) -> None:
    [spec] = tb.catalog(n=1, behaviours=["podcast"])
    ncli.ok("notify", "subscribe", "keep@example.test", spec.url, "--mode", "daily", "--hour", "6")
    before = ncli.json("notify", "list", "--json")
    mails = len(sink.mails)
    assert_clean_error(ncli("notify", "subscribe", "keep@example.test", spec.url, *args), named)
    assert ncli.json("notify", "list", "--json") == before
    assert len(sink.mails) == mails


def test_bad_notify_input_is_named(ncli: Cli, tb: Testbed, sink: MailSink) -> None:
    [spec] = tb.catalog(n=1, behaviours=["podcast"])
    assert_clean_error(ncli("notify", "subscribe", "not-an-email", spec.url), "not-an-email")
    assert_clean_error(ncli("notify", "subscribe", "a@example.test", "ftp://x.test/f"), "ftp://")
    assert_clean_error(ncli("notify", "confirm", "no-such-token"), "token")
    assert_clean_error(
        ncli("notify", "unsubscribe", "a@example.test", "http://nowhere.test/f"), "nowhere.test"
    )
    assert ncli.json("notify", "list", "--json") == []
    assert sink.mails == []


def test_send_due_exits_0_when_the_mail_server_is_down_and_loses_nothing(
    tb: Testbed, db_url: str, sink: MailSink
) -> None:
    [spec] = tb.catalog(n=1, behaviours=["podcast"])
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        down = f"smtp://127.0.0.1:{closed.getsockname()[1]}"  # bound, not listening: refused
        cli = Cli({**tb.env(), "FAIRFETCH_DB": db_url, "FAIRFETCH_SMTP_URL": down,
                   "FAIRFETCH_PUBLIC_URL": PUBLIC, "FAIRFETCH_NOTIFY_RATE": "0"})  # fmt: skip
        cli.ok("notify", "subscribe", "later@example.test", spec.url)
        r = cli("notify", "send-due", "--json")
        assert r.exit_code == 0, r.output
        [row] = cli.json("notify", "outbox", "--json")
        assert (row["kind"], row["status"]) == ("confirm", "pending")
        assert row["last_error"]
    # the server is back: the confirmation mail goes out (its retry is due later, not dropped)
    up = Cli({**cli.env, "FAIRFETCH_SMTP_URL": sink.smtp_url})
    assert cli.json("notify", "list", "--json")[0]["status"] == "pending"
    assert up("notify", "send-due").exit_code == 0
    assert [r["status"] for r in up.json("notify", "outbox", "--json")] in (["pending"], ["sent"])
