"""``notify subscribe`` and ``notify send-due`` as a newcomer runs them before the mail sink.

Following docs/notify.md without starting ``notify sink`` (or with its port mistyped),
``subscribe`` said only "queued (the mail server did not take it yet)", and ``send-due`` right
after said "sent 0, retry later 0, failed 0, cancelled 0" — as if nothing was left to send,
while the confirmation mail waited for its retry. Now subscribe says why the mail is only
queued, and send-due says how many mails are still pending.
"""

from __future__ import annotations

import dataclasses
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from fairfetch.cli import app
from fairfetch.config import Settings
from fairfetch.notify.sink import LoopbackController

FEED = "https://blog.example.test/feed.xml"


class _Accept:
    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        return "250 OK"


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for f in dataclasses.fields(Settings):
        monkeypatch.delenv("FAIRFETCH_" + f.name.upper(), raising=False)


@pytest.fixture
def away_port() -> Iterator[int]:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))  # bound, not listening: the server is away
        yield int(closed.getsockname()[1])


def _cli(tmp_path: Path, smtp_port: int, *args: str) -> Result:
    env = {"FAIRFETCH_DB": f"sqlite:///{tmp_path}/away.db",
           "FAIRFETCH_SMTP_URL": f"smtp://127.0.0.1:{smtp_port}"}
    r = CliRunner().invoke(app, list(args), env=env)
    assert r.exit_code == 0, (args, r.output, r.exception)
    return r


def _said(r: Result) -> str:
    return " ".join(r.stdout.split())  # as one line, however the console wrapped it


def test_walk_subscribe_says_why_its_mail_is_only_queued(tmp_path: Path, away_port: int) -> None:
    first = _said(_cli(tmp_path, away_port, "notify", "subscribe", "ana@example.test", FEED))
    assert "queued, not sent (cannot reach the mail server" in first, first
    assert str(away_port) in first
    assert "notify send-due" in first
    assert " sent;" not in first
    # a second reader's mail waits behind the first: said so, not "sent"
    second = _said(_cli(tmp_path, away_port, "notify", "subscribe", "bob@example.test", FEED))
    assert "queued" in second, second
    assert " sent;" not in second


def test_walk_send_due_says_what_is_still_pending(tmp_path: Path, away_port: int) -> None:
    _cli(tmp_path, away_port, "notify", "subscribe", "ana@example.test", FEED)
    out = _said(_cli(tmp_path, away_port, "notify", "send-due"))
    assert out.startswith("sent 0, retry later 0, failed 0, cancelled 0"), out
    assert "1 still pending (notify outbox says when each is due)" in out


def test_walk_with_the_server_up_nothing_is_said_pending(tmp_path: Path) -> None:
    ctl = LoopbackController(_Accept(), hostname="127.0.0.1", port=0)
    ctl.start()
    try:
        port = int(ctl.port)
        said = _said(_cli(tmp_path, port, "notify", "subscribe", "ana@example.test", FEED))
        assert "confirmation mail to ana@example.test sent;" in said, said
        out = _said(_cli(tmp_path, port, "notify", "send-due"))
    finally:
        ctl.stop()
    assert out == "sent 0, retry later 0, failed 0, cancelled 0", out
