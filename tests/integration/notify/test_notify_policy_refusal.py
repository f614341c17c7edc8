"""A 5.7.x reply (RFC 3463 "security or policy status": relaying denied, our IP or domain on a
block list, SPF/DKIM/DMARC) refuses US, not the reader's mailbox. It used to count as a hard
failure of the address like a 5.1.1 "no such mailbox", so three of them flagged a good reader
and failed their mails for good: our own reputation problem silenced our readers.

Now such a mail stays pending with backoff, the reader's count is untouched, and the reason says
it is ours to fix. A bad mailbox (5.1.1), or a 550 without an enhanced code, still counts."""

from __future__ import annotations

from datetime import timedelta

import sqlalchemy as sa

from fairfetch.notify.service import send_due
from fairfetch.store import notify_repo as repo
from fairfetch.store.tables_notify import notify_readers

from .conftest import FAST, T0, SmtpServer, World


def _answer_rcpt(server: SmtpServer, reply: str) -> None:
    """The server answers every RCPT with ``reply`` (a real SMTP reply line)."""

    async def handle_RCPT(srv, session, envelope, address, rcpt_options):
        if reply.startswith("250"):
            envelope.rcpt_tos.append(address)
        return reply

    server.handler.handle_RCPT = handle_RCPT  # type: ignore[method-assign]


def _three_mails(w: World) -> int:
    fid = w.add_feed("https://a.example.test/feed")
    w.subscribe("ana@example.test", fid)
    w.write(fid, [w.entry(f"item {i}") for i in range(3)], at=T0 + timedelta(minutes=1))
    return fid


async def _refused_as_ours(w: World) -> tuple[list, list[dict]]:
    """Three passes over three mails the server refuses as ours: none failed, no reader
    flagged, each retried and still pending (not lost: retried with backoff)."""
    reports = await _passes(w, 3)
    assert sum(r.failed for r in reports) == 0
    assert sum(r.flagged for r in reports) == 0
    assert sum(r.retried for r in reports) == 3
    assert _reader(w)["flagged_at"] is None
    rows = [r for r in w.outbox() if r["kind"] == "item"]
    assert {r["status"] for r in rows} == {"pending"}
    return reports, rows


def _reader(w: World) -> dict:
    [listed] = repo.list_subscriptions(w.store)
    return listed


async def _passes(w: World, n: int) -> list:
    """``n`` passes a second apart, each trying what is due (a pass stops at a temporary
    failure, as for a throttling server; the next one goes on with the rows after it)."""
    return [
        await send_due(w.store, w.settings, T0 + timedelta(minutes=2, seconds=i), options=FAST)
        for i in range(n)
    ]


async def test_notify_policy_refusal_at_rcpt_does_not_flag_the_reader(mail_world, smtp_server):
    w = mail_world
    _three_mails(w)
    _answer_rcpt(smtp_server, "550 5.7.1 Service unavailable; client host blocked using a list")

    reports, rows = await _refused_as_ours(w)
    assert [r["attempts"] for r in rows] == [1, 1, 1]
    assert all(r["due_at"] >= T0 + timedelta(minutes=2, seconds=30) for r in rows)
    assert all("5.7.1" in r["last_error"] and "not the reader" in r["last_error"] for r in rows)
    assert any("not the reader" in e for r in reports for e in r.errors)  # the operator is told

    # our block is lifted: every mail goes out, to the reader never flagged
    _answer_rcpt(smtp_server, "250 OK")
    done = await send_due(w.store, w.settings, T0 + timedelta(days=1), options=FAST)
    assert done.sent == 3
    assert {r["status"] for r in w.outbox() if r["kind"] == "item"} == {"sent"}


async def test_notify_policy_refusal_at_data_does_not_flag_the_reader(mail_world, smtp_server):
    w = mail_world
    _three_mails(w)
    smtp_server.handler.script = lambda n: "554 5.7.1 message refused as likely unsolicited:"

    reports = await _passes(w, 3)

    assert sum(r.failed for r in reports) == 0
    assert sum(r.retried for r in reports) == 3
    assert _reader(w)["flagged_at"] is None
    assert {r["status"] for r in w.outbox() if r["kind"] == "item"} == {"pending"}


async def test_notify_bad_mailbox_at_rcpt_still_flags_the_reader(mail_world, smtp_server):
    w = mail_world
    _three_mails(w)
    _answer_rcpt(smtp_server, "550 5.1.1 The email account that you tried to reach does not exist")

    reports = await _passes(w, 1)

    assert (reports[0].failed, reports[0].flagged) == (3, 1)
    assert _reader(w)["flagged_at"] is not None
    assert {r["status"] for r in w.outbox() if r["kind"] == "item"} == {"failed"}


async def test_notify_plain_550_at_rcpt_still_flags_the_reader(mail_world, smtp_server):
    """Without an enhanced code a 550 is RFC 5321's "mailbox unavailable": the reader's."""
    w = mail_world
    _three_mails(w)
    _answer_rcpt(smtp_server, "550 Requested action not taken: mailbox unavailable")

    reports = await _passes(w, 1)

    assert (reports[0].failed, reports[0].flagged) == (3, 1)
    assert _reader(w)["flagged_at"] is not None


async def test_notify_message_too_big_fails_it_without_counting_against_the_reader(
    mail_world, smtp_server
):
    """5.3.4 (message too big for the system) is about our message, not the address: that mail
    fails (recorded), the others still reach the reader, who is not flagged."""
    w = mail_world
    _three_mails(w)
    smtp_server.handler.script = lambda n: "552 5.3.4 Message size exceeds fixed limit;" if (
        n <= 3) else "250"

    first = (await _passes(w, 1))[0]
    assert (first.failed, first.flagged) == (3, 0)
    assert _reader(w)["flagged_at"] is None
    fid = w.feeds["https://a.example.test/feed"]
    w.write(fid, [w.entry("small one")], at=T0 + timedelta(hours=1))
    later = await send_due(w.store, w.settings, T0 + timedelta(hours=1), options=FAST)
    assert later.sent == 1


async def test_notify_bare_relaying_denied_at_rcpt_does_not_flag_the_reader(
    mail_world, smtp_server
):
    """A server without ENHANCEDSTATUSCODES says "550 Relaying denied": our relay permission,
    not the reader's mailbox. It counted as a hard bounce, and three of them flagged a good
    reader and failed their mails for good."""
    w = mail_world
    _three_mails(w)
    _answer_rcpt(smtp_server, "550 Relaying denied")

    _, rows = await _refused_as_ours(w)
    assert all("Relaying denied" in r["last_error"] and "not the reader" in r["last_error"]
               for r in rows)

    _answer_rcpt(smtp_server, "250 OK")
    done = await send_due(w.store, w.settings, T0 + timedelta(days=1), options=FAST)
    assert done.sent == 3
    assert _reader(w)["flagged_at"] is None


async def test_notify_policy_refusal_gives_up_after_three_days_and_releases_the_credit(
    mail_world, smtp_server, caplog
):
    """A refusal of ours (5.7.1: our IP on a block list) that never lifts retried hourly for
    ever, holding the publisher's credit for it. After POLICY_GIVE_UP_AFTER (3 days) from the
    first refusal the mail fails for good, saying why and since when, its credit is given
    back, the reader is not counted against, and the row stays on record."""
    w = mail_world
    fid = w.add_feed("https://a.example.test/feed")
    w.subscribe("ana@example.test", fid)
    pub = repo.grant(w.store, "Example Media", 5, T0, feed_ids=[fid])["id"]
    w.write(fid, [w.entry("item")], at=T0 + timedelta(minutes=1))
    _answer_rcpt(smtp_server, "554 5.7.1 Service unavailable; client host blocked using a list")
    first = T0 + timedelta(minutes=2)

    def holds() -> list[tuple[str, int]]:
        return [(r["kind"], r["amount"]) for r in repo.ledger(w.store)
                if r["publisher_id"] == pub and r["kind"] != "grant"]

    # refused hourly (the backoff's ceiling) for just under three days: still pending, held
    at = first
    while at < first + timedelta(days=3):
        report = await send_due(w.store, w.settings, at, options=FAST)
        assert (report.sent, report.failed, report.retried) == (0, 0, 1), at
        at += timedelta(hours=1)
    [row] = [r for r in w.outbox() if r["kind"] == "item"]
    assert row["status"] == "pending"
    assert holds() == [("hold", -1)]
    assert "since 2026-03-02T09:02:00+00:00" in row["last_error"]  # the first refusal's time

    # the first refusal three days after the first one: failed for good
    with caplog.at_level("WARNING"):
        done = await send_due(w.store, w.settings, first + timedelta(days=3, minutes=1),
                              options=FAST)
    assert (done.sent, done.failed, done.retried, done.flagged) == (0, 1, 0, 0)
    [row] = [r for r in w.outbox() if r["kind"] == "item"]
    assert row["status"] == "failed"  # recorded, not deleted
    reason = row["last_error"]
    assert reason.startswith("gave up")
    assert "refused by the mail system's policy" in reason
    assert "since 2026-03-02T09:02:00+00:00" in reason
    assert "554 5.7.1 Service unavailable" in reason
    assert any("gave up" in e for e in done.errors)
    assert any("gave up" in m for m in caplog.messages)  # the operator is told in the log
    assert holds() == [("released", 0)]  # the publisher's credit is given back
    assert _reader(w)["flagged_at"] is None
    with w.store.engine.connect() as conn:
        assert conn.execute(sa.select(notify_readers.c.hard_failures)).scalar_one() == 0

    # failed for good means it is not tried again, even once the block is lifted
    _answer_rcpt(smtp_server, "250 OK")
    later = await send_due(w.store, w.settings, first + timedelta(days=5), options=FAST)
    assert later.sent == 0
    assert smtp_server.accepted == []


async def test_notify_a_4xx_policy_reply_never_gives_up(mail_world, smtp_server):
    """Only a 5xx refusal of ours has an end: a 4.7.x (greylisting, a rate limit) is the
    server's "later", retried as long as it takes."""
    w = mail_world
    fid = w.add_feed("https://a.example.test/feed")
    w.subscribe("ana@example.test", fid)
    w.write(fid, [w.entry("item")], at=T0 + timedelta(minutes=1))
    _answer_rcpt(smtp_server, "451 4.7.1 Greylisted, please try again later")
    for day in range(6):
        report = await send_due(w.store, w.settings, T0 + timedelta(days=day, minutes=2),
                                options=FAST)
        assert (report.failed, report.retried) == (0, 1)
    assert {r["status"] for r in w.outbox() if r["kind"] == "item"} == {"pending"}
