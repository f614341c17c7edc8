"""A message larger than the server takes (RFC 1870 SIZE).

The SMTP client announces the size in MAIL FROM (``SIZE=n``) when the server offers the SIZE
extension, and a server over its limit refuses there: '552 5.3.4 Message size exceeds fixed
limit' (Postfix), '552 Error: message size exceeds fixed maximum message size' (aiosmtpd). A
refusal at MAIL FROM was read as the server refusing our sender — about our configuration —
so the row waited for the server, and the whole queue behind it: one oversized mail (a long
digest, an entry with a huge body) stopped every notification of every reader, for good."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta

import pytest

from fairfetch.notify.service import send_due
from fairfetch.notify.sink import LoopbackController
from fairfetch.store import notify_repo as repo

from .conftest import FAST, T0, ScriptedHandler, SmtpServer, _world

LIMIT = 200_000
POSTFIX_DEFAULT = 10_240_000  # message_size_limit


@contextmanager
def _server(limit: int) -> Iterator[SmtpServer]:
    handler = ScriptedHandler()
    ctl = LoopbackController(handler, hostname="127.0.0.1", port=0, data_size_limit=limit)
    ctl.start()
    try:
        yield SmtpServer(handler, int(ctl.port))
    finally:
        ctl.stop()


@pytest.fixture
def small_server() -> Iterator[SmtpServer]:
    with _server(LIMIT) as server:
        yield server


async def test_notify_a_mail_too_big_for_the_server_fails_alone(tmp_path, small_server):
    w = _world(f"sqlite:///{tmp_path}/n.db", small_server.url)
    try:
        fid = w.add_feed("https://a.example.test/feed")
        w.subscribe("ana@example.test", fid)
        w.subscribe("bob@example.test", fid)
        huge = "<p>" + "word " * (LIMIT // 4) + "</p>"
        w.write(fid, [w.entry("before"), w.entry("huge", content=huge), w.entry("after")],
                at=T0 + timedelta(minutes=1))

        report = await send_due(w.store, w.settings, T0 + timedelta(minutes=2), options=FAST)

        assert (report.sent, report.failed, report.flagged, report.retried) == (4, 2, 0, 0)
        assert sorted((r.rcpt, str(r.msg["Subject"])) for r in small_server.accepted) == [
            ("ana@example.test", "[https://a.example.test/feed] after"),
            ("ana@example.test", "[https://a.example.test/feed] before"),
            ("bob@example.test", "[https://a.example.test/feed] after"),
            ("bob@example.test", "[https://a.example.test/feed] before"),
        ]
        failed = [r for r in w.outbox() if r["status"] == "failed"]
        assert len(failed) == 2
        assert all("552" in r["last_error"] and "size" in r["last_error"] for r in failed)
        # about the message, not the reader: nobody's count moves, nothing waits
        assert all(s["flagged_at"] is None for s in repo.list_subscriptions(w.store))
        assert repo.queue_held_from(w.store, T0 + timedelta(minutes=3)) is None
    finally:
        w.store.close()


async def test_notify_a_digest_of_hundreds_of_full_text_items_fits_a_common_size_limit(tmp_path):
    """A week of a full-text feed (300 items of ~29 KB) made a 12 MB digest: over Postfix's
    default limit, refused, and the whole issue failed with every item in it."""
    with _server(POSTFIX_DEFAULT) as server:
        w = _world(f"sqlite:///{tmp_path}/n.db", server.url)
        try:
            fid = w.add_feed("https://a.example.test/feed")
            w.subscribe("ana@example.test", fid, mode="daily", hour=10)
            article = "<p>" + "Lorem ipsum dolor sit amet, consectetur. " * 700 + "</p>"
            w.write(fid, [w.entry(f"post {i}", content=article) for i in range(300)],
                    at=T0 + timedelta(minutes=1))

            report = await send_due(w.store, w.settings, T0 + timedelta(hours=2), options=FAST)

            assert (report.sent, report.failed, report.retried) == (1, 0, 0), report.errors
            [got] = server.accepted
            assert str(got.msg["Subject"]).startswith("Daily digest: 300 new items")
            html = got.msg.get_body(("html",)).get_content()
            assert all(f">post {i}</a>" in html for i in range(300))
        finally:
            w.store.close()
