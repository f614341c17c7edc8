"""A reader whose address is not ASCII (``josé@…``, accepted by the subscribe form and the CLI).

Handing it to the SMTP client as ASCII raised UnicodeEncodeError out of the pass: ``notify
send-due`` died with a traceback, and since the sender takes the oldest row first, every later
pass died on the same row — nobody got mail any more. Such an address goes with SMTPUTF8 (RFC
6531) when the server offers it; when it does not, that one message fails with the reason and
every other reader's mail goes out."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest

from fairfetch.notify.service import send_due
from fairfetch.notify.sink import LoopbackController
from fairfetch.notify.subscriptions import check_email

from .conftest import FAST, T0, ScriptedHandler, SmtpServer, _world


@pytest.fixture
def ascii_only_server() -> Iterator[SmtpServer]:
    handler = ScriptedHandler()
    ctl = LoopbackController(handler, hostname="127.0.0.1", port=0, enable_SMTPUTF8=False)
    ctl.start()
    try:
        yield SmtpServer(handler, int(ctl.port))
    finally:
        ctl.stop()


def _world_with_jose(tmp_path, smtp_url):
    w = _world(f"sqlite:///{tmp_path}/n.db", smtp_url)
    fid = w.add_feed("https://a.example.test/feed")
    jose = check_email("José@Example.test")
    assert jose == "josé@example.test"
    w.subscribe(jose, fid)  # the oldest subscription: his row comes first
    w.subscribe("bob@example.test", fid)
    w.write(fid, [w.entry("hola")], at=T0 + timedelta(minutes=1))
    return w


async def test_notify_non_ascii_address_is_sent_with_smtputf8(tmp_path, smtp_server):
    w = _world_with_jose(tmp_path, smtp_server.url)
    try:
        report = await send_due(w.store, w.settings, T0 + timedelta(minutes=2), options=FAST)
        assert (report.sent, report.failed, report.retried) == (2, 0, 0)
        assert sorted(r.rcpt for r in smtp_server.accepted) == [
            "bob@example.test", "josé@example.test"]
        [to_jose] = [r for r in smtp_server.accepted if r.rcpt == "josé@example.test"]
        assert "josé@example.test" in str(to_jose.msg["To"])
        assert {r["status"] for r in w.outbox() if r["kind"] == "item"} == {"sent"}
    finally:
        w.store.close()


async def test_notify_non_ascii_address_without_smtputf8_fails_alone(
    tmp_path, ascii_only_server
):
    w = _world_with_jose(tmp_path, ascii_only_server.url)
    try:
        report = await send_due(w.store, w.settings, T0 + timedelta(minutes=2), options=FAST)
        assert (report.sent, report.failed) == (1, 1)
        assert [r.rcpt for r in ascii_only_server.accepted] == ["bob@example.test"]
        rows = {r["email"]: r for r in w.outbox() if r["kind"] == "item"}
        assert rows["bob@example.test"]["status"] == "sent"
        assert rows["josé@example.test"]["status"] == "failed"
        assert "SMTPUTF8" in rows["josé@example.test"]["last_error"]
        # and the next pass does not trip over it either
        again = await send_due(w.store, w.settings, T0 + timedelta(hours=3), options=FAST)
        assert (again.sent, again.failed, again.retried) == (0, 0, 0)
    finally:
        w.store.close()


async def test_notify_an_ascii_mailbox_on_an_idn_domain_goes_without_smtputf8(
    tmp_path, ascii_only_server
):
    """``ana@bücher.test``: only the domain is non-ASCII, and a domain has an ASCII form (IDNA,
    ``xn--bcher-kva.test``) every server takes. It was sent only with SMTPUTF8, so a server
    without it (many relays) failed every mail of such a reader."""
    w = _world(f"sqlite:///{tmp_path}/n.db", ascii_only_server.url)
    try:
        fid = w.add_feed("https://a.example.test/feed")
        ana = check_email("Ana@Bücher.test")
        assert ana == "ana@bücher.test"
        w.subscribe(ana, fid)
        w.write(fid, [w.entry("hallo")], at=T0 + timedelta(minutes=1))
        report = await send_due(w.store, w.settings, T0 + timedelta(minutes=2), options=FAST)
        assert (report.sent, report.failed) == (1, 0), report.errors
        [got] = ascii_only_server.accepted
        assert got.rcpt == "ana@xn--bcher-kva.test"
        assert got.data.isascii()
        assert str(got.msg["To"]) == "ana@xn--bcher-kva.test"
    finally:
        w.store.close()
