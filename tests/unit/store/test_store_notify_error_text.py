"""A mail server's reply is stored as the notification's ``last_error``. aiosmtplib decodes a
reply that is not UTF-8 (a French server's Latin-1 "Boîte pleine") with surrogateescape, and
PostgreSQL refuses NUL in text: recording the retry or the failure raised (a UnicodeEncodeError
traceback on both backends), so the outcome was never written, and the mail was tried again
each pass, its hard failures never counted. The text is stored with those characters
replaced, as every other text the outside world writes into the store."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa

from fairfetch.store import notify_subscriptions as subs
from fairfetch.store import open_store
from fairfetch.store.notify_credits import list_sink, record_sink
from fairfetch.store.notify_delivery import mark_failed, mark_temporary
from fairfetch.store.tables_notify import notify_outbox

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("reply", "stored"),
    [("452 Bo\udceete pleine", "452 Bo\ufffdte pleine"), ("550 no\x00such", "550 no\ufffdsuch")],
)
def test_store_smtp_reply_any_bytes_is_recorded(db_url: str, reply: str, stored: str) -> None:
    store = open_store(db_url)
    try:
        feed, _ = store.add_feed("https://a.example/feed", now=NOW, politeness_key="a.example")
        subs.subscribe(store, "r@r.example", feed.id, mode="realtime", hour=7, weekday=0,
                       tz=None, only=[], exclude=[], now=NOW)
        with store.engine.connect() as conn:
            [box] = conn.execute(sa.select(notify_outbox.c.id)).scalars().all()

        mark_temporary(store, box, NOW, reply, NOW + timedelta(minutes=1))
        with store.engine.connect() as conn:
            row = conn.execute(sa.select(notify_outbox).where(notify_outbox.c.id == box)).one()
        assert (row.status, row.attempts, row.last_error) == ("pending", 1, stored)

        mark_failed(store, box, NOW + timedelta(minutes=1), reply, flag_after=3)
        with store.engine.connect() as conn:
            row = conn.execute(sa.select(notify_outbox).where(notify_outbox.c.id == box)).one()
        assert (row.status, row.attempts, row.last_error) == ("failed", 2, stored)
    finally:
        store.close()


def test_store_sink_keeps_a_mail_with_any_bytes(db_url: str) -> None:
    """The mail sink (`notify sink`) keeps what a client sent: the email package reads a raw
    8-bit header with surrogateescape, and a body may hold NUL."""
    store = open_store(db_url)
    try:
        record_sink(store, received_at=NOW, mail_from="a@a.example", rcpt_to="r@r.example",
                    subject="Bo\udceete", message_id="<1@a>", raw="Subject: x\r\n\r\nbody\x00")
        [mail] = list_sink(store)
        assert (mail["subject"], mail["raw"]) == ("Bo\ufffdte", "Subject: x\r\n\r\nbody\ufffd")
    finally:
        store.close()
