"""Two senders at once (the web app's confirmation mail beside ``run``'s notifier pass, or a cron
``notify send-due`` beside ``run`` on PostgreSQL) must not both send a row: each notification
reaches the reader once.

Deterministic interleaving, no sleeps: sender A's SMTP server runs sender B's whole pass (to a
second SMTP server) while A's first message is on the wire, so B reads the same pending rows A
read and works while A holds one in flight."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from datetime import timedelta

import pytest

from fairfetch.notify.service import send_due

from .conftest import FAST, T0, SmtpServer, race_two_senders, scripted_smtp_server


@pytest.fixture
def second_smtp_server() -> Iterator[SmtpServer]:
    with scripted_smtp_server() as server:
        yield server


async def test_notify_two_senders_at_once_send_each_row_once(
    any_world, smtp_server, second_smtp_server
):
    w = any_world
    fid = w.add_feed("https://a.example.test/feed")
    w.subscribe("ana@example.test", fid)
    w.subscribe("bob@example.test", fid, mode="daily", hour=8)
    w.write(fid, [w.entry(f"item {i}") for i in range(3)], at=T0 + timedelta(minutes=1))
    now = T0 + timedelta(days=1)  # the digest issue (08:00 on T0) is due too
    due = [r for r in w.outbox() if r["status"] == "pending"]
    assert len(due) == 4  # three real-time mails, one digest issue

    a, b = await race_two_senders(w, smtp_server, second_smtp_server, now)

    delivered = Counter(
        (r.rcpt, str(r.msg["Subject"]))
        for r in smtp_server.accepted + second_smtp_server.accepted
    )
    assert len(delivered) == 4  # every notification reached its reader
    assert set(delivered.values()) == {1}  # and none twice
    assert a.sent + b.sent == 4
    assert a.sent >= 1  # A's in-flight row stayed A's: B did not take it
    assert b.sent >= 1  # B was not idle: it sent what A had not started
    assert {r["status"] for r in w.outbox() if r["kind"] != "confirm"} == {"sent"}


_SENDER_B = """
import asyncio, json, sys
from datetime import datetime
from fairfetch.config import Settings
from fairfetch.notify.options import NotifyOptions
from fairfetch.notify.service import send_due
from fairfetch.store import open_store

db, smtp_url, now = sys.argv[1:4]
store = open_store(db)
settings = Settings(db=db, smtp_url=smtp_url, public_url="https://news.example.test",
                    mail_from="fairfetch <mail@news.example.test>")
report = asyncio.run(send_due(store, settings, datetime.fromisoformat(now),
                              options=NotifyOptions(rate=0.0)))
print(json.dumps({"sent": report.sent}))
"""


async def test_notify_two_sender_processes_on_sqlite_send_each_row_once(
    world, smtp_server, second_smtp_server
):
    # A cron `notify send-due` beside `run` on SQLite: sender B is another process, started
    # while sender A's first message is on the wire. Claims that held within one process only
    # let B send every row A had read, A's in-flight one included.
    import json
    import subprocess
    import sys

    w = world
    fid = w.add_feed("https://a.example.test/feed")
    w.subscribe("ana@example.test", fid)
    w.subscribe("bob@example.test", fid, mode="daily", hour=8)
    w.write(fid, [w.entry(f"item {i}") for i in range(3)], at=T0 + timedelta(minutes=1))
    now = T0 + timedelta(days=1)
    assert len([r for r in w.outbox() if r["status"] == "pending"]) == 4

    settings_a = w.settings.replace(smtp_url=smtp_server.url)
    b_out: list[str] = []

    def while_a_in_flight(_got) -> None:
        if len(smtp_server.handler.accepted) == 0 and not b_out:
            done = subprocess.run(
                [sys.executable, "-c", _SENDER_B, w.settings.db, second_smtp_server.url,
                 now.isoformat()],
                capture_output=True, text=True, timeout=120, check=True,
            )  # fmt: skip
            b_out.append(done.stdout.strip().splitlines()[-1])

    smtp_server.handler.on_data = while_a_in_flight
    a = await send_due(w.store, settings_a, now, options=FAST)
    assert len(b_out) == 1
    b_sent = json.loads(b_out[0])["sent"]
    delivered = Counter(
        (r.rcpt, str(r.msg["Subject"]))
        for r in smtp_server.accepted + second_smtp_server.accepted
    )
    assert len(delivered) == 4  # every notification reached its reader
    assert set(delivered.values()) == {1}  # and none twice
    assert a.sent + b_sent == 4
    assert a.sent >= 1  # A's in-flight row stayed A's
    assert b_sent >= 1  # B sent what A had not started
    assert {r["status"] for r in w.outbox() if r["kind"] != "confirm"} == {"sent"}
