"""A publisher's last credit pays for one mail, however many senders run at once.

Two senders (``run`` on two machines, or the web's confirmation mailer beside ``run``) each read
the balance before sending: with one credit left both saw 1, both sent "paid by the publisher"
and both booked the charge, so the publisher was overdrawn and two mails went out on one credit.

Deterministic interleaving, no sleeps: sender A's SMTP server runs sender B's whole pass (to a
second SMTP server) while A's message is on the wire, after A decided who pays."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import timedelta

import pytest

from fairfetch.notify.service import SendReport, send_due
from fairfetch.store import notify_repo as repo

from .conftest import FAST, T0, SmtpServer, World, race_two_senders, scripted_smtp_server

RAN_OUT = "credit has run out"


@pytest.fixture
def second_smtp_server() -> Iterator[SmtpServer]:
    with scripted_smtp_server() as server:
        yield server


def _told_ran_out(received) -> bool:
    return RAN_OUT in next(received.msg.iter_parts()).get_content()


def _charges(w: World) -> dict[tuple[str, int], int]:
    out: dict[tuple[str, int], int] = {}
    for row in repo.ledger(w.store):
        if row["kind"] != "charge":
            continue
        party = ("publisher", row["publisher_id"]) if row["publisher_id"] else (
            "reader", row["reader_id"])
        out[party] = out.get(party, 0) + row["amount"]
    return out


async def _race(w: World, a_server: SmtpServer, b_server: SmtpServer, now) -> SendReport:
    """Sender A's pass; B's whole pass runs while A's first message is on the wire."""
    a, b = await race_two_senders(w, a_server, b_server, now)
    assert a.sent == 1  # each sender sent one of the two mails
    assert b.sent == 1
    return a


async def test_notify_last_credit_pays_for_one_realtime_mail_with_two_senders(
    any_world, smtp_server, second_smtp_server
):
    w = any_world
    fid = w.add_feed("https://a.example.test/feed")
    pub = repo.grant(w.store, "P", 1, T0, feed_ids=[fid])["id"]
    ana = w.subscribe("ana@example.test", fid)
    bob = w.subscribe("bob@example.test", fid)
    w.write(fid, [w.entry("news")], at=T0 + timedelta(minutes=1))

    await _race(w, smtp_server, second_smtp_server, T0 + timedelta(minutes=2))

    [a_mail] = smtp_server.accepted
    [b_mail] = second_smtp_server.accepted
    assert {a_mail.rcpt, b_mail.rcpt} == {"ana@example.test", "bob@example.test"}
    # the one credit paid for the mail whose sender decided first (A's); B's reader was told
    assert not _told_ran_out(a_mail)
    assert _told_ran_out(b_mail)
    b_reader = bob["reader_id"] if b_mail.rcpt == "bob@example.test" else ana["reader_id"]
    assert _charges(w) == {("publisher", pub): -1, ("reader", b_reader): -1}
    assert {p["name"]: p["balance"] for p in repo.balances(w.store)} == {"P": 0}
    assert {r["status"] for r in w.outbox() if r["kind"] == "item"} == {"sent"}


async def test_notify_last_credit_pays_for_one_digest_with_two_senders(
    any_world, smtp_server, second_smtp_server
):
    w = any_world
    fid = w.add_feed("https://a.example.test/feed")
    pub = repo.grant(w.store, "P", 1, T0, feed_ids=[fid])["id"]
    w.subscribe("ana@example.test", fid, mode="daily", hour=8)
    w.subscribe("bob@example.test", fid, mode="daily", hour=8)
    w.write(fid, [w.entry("news")], at=T0 + timedelta(minutes=1))

    await _race(w, smtp_server, second_smtp_server, T0 + timedelta(days=1))

    [a_mail] = smtp_server.accepted
    [b_mail] = second_smtp_server.accepted
    assert not _told_ran_out(a_mail)
    assert _told_ran_out(b_mail)
    charges = _charges(w)
    assert charges[("publisher", pub)] == -1
    assert sorted(charges.values()) == [-1, -1]  # B's reader paid its issue, nobody paid twice
    assert {p["name"]: p["balance"] for p in repo.balances(w.store)} == {"P": 0}
    assert {r["status"] for r in w.outbox() if r["kind"] == "digest"} == {"sent"}


def _ledger_of(w: World, pub: int) -> list[tuple[str, int]]:
    return [(r["kind"], r["amount"]) for r in repo.ledger(w.store) if r["publisher_id"] == pub]


async def test_notify_credit_held_for_a_mail_refused_for_good_is_given_back(
    any_world, smtp_server
):
    w = any_world
    fid = w.add_feed("https://a.example.test/feed")
    pub = repo.grant(w.store, "P", 1, T0, feed_ids=[fid])["id"]
    w.subscribe("ana@example.test", fid)
    w.subscribe("bob@example.test", fid)
    w.write(fid, [w.entry("news")], at=T0 + timedelta(minutes=1))
    smtp_server.handler.script = lambda n: "rcpt:550" if n == 1 else "250"

    r = await send_due(w.store, w.settings.replace(smtp_url=smtp_server.url),
                       T0 + timedelta(minutes=2), options=FAST)

    assert (r.sent, r.failed) == (1, 1)
    [mail] = smtp_server.accepted
    assert not _told_ran_out(mail)  # the credit ana's refused mail held paid for bob's
    assert _ledger_of(w, pub) == [("grant", 1), ("released", 0), ("charge", -1)]
    assert {p["name"]: p["balance"] for p in repo.balances(w.store)} == {"P": 0}


async def test_notify_credit_held_across_a_retry_is_charged_once(any_world, smtp_server):
    w = any_world
    fid = w.add_feed("https://a.example.test/feed")
    pub = repo.grant(w.store, "P", 1, T0, feed_ids=[fid])["id"]
    w.subscribe("ana@example.test", fid)
    w.write(fid, [w.entry("news")], at=T0 + timedelta(minutes=1))
    smtp_server.handler.script = lambda n: "451" if n == 1 else "250"
    settings = w.settings.replace(smtp_url=smtp_server.url)

    first = await send_due(w.store, settings, T0 + timedelta(minutes=2), options=FAST)
    assert (first.sent, first.retried) == (0, 1)
    # the credit stays set aside for the mail that waits: nobody else can spend it meanwhile
    assert {p["name"]: p["balance"] for p in repo.balances(w.store)} == {"P": 0}
    assert _ledger_of(w, pub) == [("grant", 1), ("hold", -1)]

    second = await send_due(w.store, settings, T0 + timedelta(hours=2), options=FAST)
    assert second.sent == 1
    [mail] = smtp_server.accepted
    assert not _told_ran_out(mail)
    assert _ledger_of(w, pub) == [("grant", 1), ("charge", -1)]
    [charge] = [r for r in repo.ledger(w.store) if r["kind"] == "charge"]
    assert charge["at"] == T0 + timedelta(hours=2)  # booked when the server took the mail


async def test_notify_credit_held_for_a_mail_cancelled_before_its_retry_is_given_back(
    any_world, smtp_server
):
    w = any_world
    fid = w.add_feed("https://a.example.test/feed")
    pub = repo.grant(w.store, "P", 1, T0, feed_ids=[fid])["id"]
    w.subscribe("ana@example.test", fid)
    w.write(fid, [w.entry("news")], at=T0 + timedelta(minutes=1))
    smtp_server.handler.script = lambda n: "451"
    settings = w.settings.replace(smtp_url=smtp_server.url)
    await send_due(w.store, settings, T0 + timedelta(minutes=2), options=FAST)
    assert {p["name"]: p["balance"] for p in repo.balances(w.store)} == {"P": 0}

    repo.unsubscribe(w.store, T0 + timedelta(minutes=3), email="ana@example.test", feed_id=fid)
    r = await send_due(w.store, settings, T0 + timedelta(hours=2), options=FAST)

    assert (r.sent, r.cancelled) == (0, 1)
    assert smtp_server.accepted == []
    assert _ledger_of(w, pub) == [("grant", 1), ("released", 0)]
    assert {p["name"]: p["balance"] for p in repo.balances(w.store)} == {"P": 1}


def test_notify_credit_hold_waits_for_a_concurrent_hold_of_the_same_publisher(pg_url):
    """Truly simultaneous holds on PostgreSQL: while one transaction holds the publisher's last
    credit (not yet committed), a second hold waits for it, then sees the credit gone. Without
    the row lock the second read the committed balance (1) and took the credit too."""
    import sqlalchemy as sa

    from fairfetch.store.tables_notify import notify_ledger

    from .conftest import _world

    w = _world(pg_url)
    try:
        fid = w.add_feed("https://a.example.test/feed")
        pub = repo.grant(w.store, "P", 1, T0, feed_ids=[fid])["id"]
        w.subscribe("ana@example.test", fid)
        w.subscribe("bob@example.test", fid)
        w.write(fid, [w.entry("news")], at=T0 + timedelta(minutes=1))
        first, second = [r["id"] for r in w.outbox() if r["kind"] == "item"]

        got: list[set[int]] = []
        done = threading.Event()

        def hold_second() -> None:
            try:
                got.append(repo.hold_credits(w.store, second, [pub], T0))
            finally:
                done.set()

        with w.store.engine.connect() as x:
            tx = x.begin()
            pids = x.execute(sa.text("SELECT pg_backend_pid()")).scalar()
            # what hold_credits does for the first row, left uncommitted
            x.execute(sa.text("SELECT id FROM notify_publishers WHERE id = :p FOR NO KEY UPDATE"),
                      {"p": pub})
            x.execute(notify_ledger.insert().values(
                at=T0, kind="hold", publisher_id=pub, amount=-1, outbox_id=first,
                charge_key=f"{first}:publisher:{pub}", note=""))
            t = threading.Thread(target=hold_second)
            t.start()
            with w.store.engine.connect() as watch:  # until the second waits on our lock, or ends
                while not done.is_set():
                    waiting = watch.execute(sa.text(
                        "SELECT count(*) FROM pg_locks l JOIN pg_locks h "
                        "ON h.locktype = l.locktype AND h.relation IS NOT DISTINCT FROM l.relation "
                        "AND h.transactionid IS NOT DISTINCT FROM l.transactionid "
                        "AND h.page IS NOT DISTINCT FROM l.page "
                        "AND h.tuple IS NOT DISTINCT FROM l.tuple "
                        "WHERE NOT l.granted AND h.granted AND h.pid = :x"), {"x": pids}).scalar()
                    if waiting:
                        break
                    watch.rollback()
            tx.commit()
            t.join(timeout=60)
        assert got == [set()]  # the credit was gone: bob's mail is the reader's, and says so
        assert {p["name"]: p["balance"] for p in repo.balances(w.store)} == {"P": 0}
    finally:
        w.store.close()
