"""A long outage of the mail server, seen by many passes (``run`` polls every 15 s): once the
server is back the backlog drains by itself, oldest first (issue 6, point 3).

With a backoff kept per row, each pass pushed back whichever row it happened to try, so after
the outage the rows came due in a scattered order — newer items overtook older ones — and the
oldest waited longest. A server that cannot be reached (or says 421) holds back the whole queue
in order; the backoff is the server's, not one message's."""

from __future__ import annotations

from datetime import timedelta

from fairfetch.notify.service import send_due

from .conftest import FAST, T0, _world


async def test_notify_long_outage_drains_oldest_first(tmp_path, smtp_server):
    w = _world(f"sqlite:///{tmp_path}/n.db", "smtp://127.0.0.1:1")  # nothing listens there
    try:
        fid = w.add_feed("https://a.example.test/feed")
        w.subscribe("ana@example.test", fid)
        for i in range(6):
            w.write(fid, [w.entry(f"item {i}")], at=T0 + timedelta(minutes=i))
        now = T0 + timedelta(minutes=10)
        for _ in range(40):  # ten minutes of passes, 15 s apart, against a dead server
            report = await send_due(w.store, w.settings, now, options=FAST)
            assert report.sent == 0
            now += timedelta(seconds=15)
        assert {r["status"] for r in w.outbox() if r["kind"] == "item"} == {"pending"}
        # the server is back: drain at advancing instants
        w.settings = w.settings.replace(smtp_url=smtp_server.url)
        for _ in range(50):
            await send_due(w.store, w.settings, now, options=FAST)
            pending = [r for r in w.outbox() if r["status"] == "pending"]
            if not pending:
                break
            now = max(now, min(r["due_at"] for r in pending))
        subjects = [r.msg["Subject"] for r in smtp_server.accepted]
        assert subjects == [f"[https://a.example.test/feed] item {i}" for i in range(6)]
    finally:
        w.store.close()


async def test_notify_items_written_during_the_outage_wait_their_turn(tmp_path, smtp_server):
    """Rows written while the server is away come due before the held ones' retry: they must
    not be sent first (nor probe the dead server in their own right)."""
    w = _world(f"sqlite:///{tmp_path}/n.db", "smtp://127.0.0.1:1")
    try:
        fid = w.add_feed("https://a.example.test/feed")
        w.subscribe("ana@example.test", fid)
        # as a feed lists them, newest first: they go out oldest first
        w.write(fid, [w.entry(f"item {i}") for i in (2, 1, 0)], at=T0 + timedelta(minutes=1))
        now = T0 + timedelta(minutes=2)
        for _ in range(8):  # two minutes of passes: the held row's backoff grows past them
            await send_due(w.store, w.settings, now, options=FAST)
            now += timedelta(seconds=15)
        w.write(fid, [w.entry("item 3")], at=now)  # due at once, before the held retry
        down = await send_due(w.store, w.settings, now, options=FAST)
        assert (down.sent, down.retried, down.deferred) == (0, 0, True)  # waited, untried
        w.settings = w.settings.replace(smtp_url=smtp_server.url)
        early = await send_due(w.store, w.settings, now, options=FAST)
        assert early.sent == 0  # the server is back, but the oldest row's retry is not yet due
        held = max(r["due_at"] for r in w.outbox() if r["status"] == "pending")
        await send_due(w.store, w.settings, max(now, held), options=FAST)
        subjects = [r.msg["Subject"] for r in smtp_server.accepted]
        assert subjects == [f"[https://a.example.test/feed] item {i}" for i in range(4)]
    finally:
        w.store.close()


async def test_notify_one_mailbox_saying_try_later_does_not_hold_the_others(
    mail_world, smtp_server
):
    """The other direction: a 4xx to one recipient (greylisting, a full mailbox) is that
    message's backoff; the other readers' mail goes out on the next pass."""
    w = mail_world
    fid = w.add_feed("https://a.example.test/feed")
    w.subscribe("grey@example.test", fid)
    w.subscribe("ana@example.test", fid)
    w.write(fid, [w.entry("hello")], at=T0 + timedelta(minutes=1))
    smtp_server.handler.script = lambda n: "rcpt:451" if n == 1 else "250"
    now = T0 + timedelta(minutes=2)
    first = await send_due(w.store, w.settings, now, options=FAST)
    assert (first.sent, first.retried) == (0, 1)
    second = await send_due(w.store, w.settings, now + timedelta(seconds=15), options=FAST)
    assert second.sent == 1
    assert [r.rcpt for r in smtp_server.accepted] == ["ana@example.test"]
