"""A 5xx that is about us, not about the reader: the server refusing our login, our envelope
sender or our connection. Every mail of the pass would get the same answer, so it must not fail
the readers' messages one by one, nor flag their addresses (that would lose every notification
over one wrong password). The rows stay pending and drain once the server takes our mail."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest
import sqlalchemy as sa
from aiosmtpd.smtp import AuthResult

from fairfetch.notify.service import send_due
from fairfetch.store.tables_notify import notify_readers

from .conftest import FAST, T0, ScriptedHandler, SmtpServer, _world


class _Gate:
    """What the server thinks of us: ``ok`` flips when the operator fixes the configuration."""

    def __init__(self) -> None:
        self.ok = False


@pytest.fixture
def sender_refused_server() -> Iterator[tuple[SmtpServer, _Gate]]:
    from fairfetch.notify.sink import LoopbackController

    gate = _Gate()
    handler = ScriptedHandler()

    async def handle_mail(server, session, envelope, address, mail_options):
        if not gate.ok:
            return "553 5.7.1 sender address rejected: not owned by this account"
        envelope.mail_from = address
        return "250 OK"

    handler.handle_MAIL = handle_mail  # type: ignore[attr-defined]
    ctl = LoopbackController(handler, hostname="127.0.0.1", port=0)
    ctl.start()
    try:
        yield SmtpServer(handler, int(ctl.port)), gate
    finally:
        ctl.stop()


@pytest.fixture
def auth_server() -> Iterator[tuple[SmtpServer, _Gate]]:
    from fairfetch.notify.sink import LoopbackController

    gate = _Gate()
    handler = ScriptedHandler()

    def authenticator(server, session, envelope, mechanism, auth_data):
        return AuthResult(success=gate.ok, handled=False)

    ctl = LoopbackController(
        handler, hostname="127.0.0.1", port=0, authenticator=authenticator,
        auth_require_tls=False,
    )
    ctl.start()
    try:
        yield SmtpServer(handler, int(ctl.port)), gate
    finally:
        ctl.stop()


def _setup(tmp_path, smtp_url):
    w = _world(f"sqlite:///{tmp_path}/n.db", smtp_url)
    fid = w.add_feed("https://a.example.test/feed")
    for who in ("ana", "bob", "cy"):
        w.subscribe(f"{who}@example.test", fid)
    w.write(fid, [w.entry(f"item {i}") for i in range(4)], at=T0 + timedelta(minutes=1))
    return w


async def _assert_nothing_failed_then_drains(w, server, gate):
    report = await send_due(w.store, w.settings, T0 + timedelta(minutes=2), options=FAST)
    assert (report.sent, report.failed, report.flagged) == (0, 0, 0)
    assert report.deferred  # the pass stopped: the same answer awaits every message
    assert report.retried == 1
    items = [r for r in w.outbox() if r["kind"] == "item"]
    assert len(items) == 12
    assert {r["status"] for r in items} == {"pending"}
    with w.store.engine.connect() as conn:
        flags = conn.execute(
            sa.select(notify_readers.c.hard_failures, notify_readers.c.flagged_at)
        ).all()
    assert all(n == 0 and f is None for n, f in flags)
    # the operator fixes it: every notification goes out, once
    gate.ok = True
    now = T0 + timedelta(minutes=3)
    for _ in range(20):
        await send_due(w.store, w.settings, now, options=FAST)
        pending = [r for r in w.outbox() if r["status"] == "pending"]
        if not pending:
            break
        now = max(now, min(r["due_at"] for r in pending))
    assert {r["status"] for r in w.outbox() if r["kind"] == "item"} == {"sent"}
    got = sorted((r.rcpt, r.msg["Subject"]) for r in server.accepted)
    assert len(got) == 12
    assert len(set(got)) == 12  # every notification, none twice


async def test_notify_sender_refused_5xx_fails_no_reader(tmp_path, sender_refused_server):
    server, gate = sender_refused_server
    w = _setup(tmp_path, server.url)
    try:
        await _assert_nothing_failed_then_drains(w, server, gate)
    finally:
        w.store.close()


async def test_notify_login_refused_535_fails_no_reader(tmp_path, auth_server):
    server, gate = auth_server
    w = _setup(tmp_path, f"smtp://fairfetch:wrong@127.0.0.1:{server.port}")
    try:
        await _assert_nothing_failed_then_drains(w, server, gate)
    finally:
        w.store.close()
