"""An address flagged after repeated hard failures is not flagged for ever: when its reader asks
for a subscription again, the confirmation mail is tried, and the server taking it clears the
flag. Without that, the reader's new confirmation "failed" unsent while the page and the CLI said
it was sent, and nothing could ever reach that address again."""

from __future__ import annotations

from datetime import timedelta

from fairfetch.notify.service import send_due
from fairfetch.store import notify_repo as repo

from .conftest import FAST, T0


async def test_notify_flagged_address_unflagged_by_an_accepted_confirmation(
    mail_world, smtp_server
):
    w = mail_world
    fid = w.add_feed("https://a.example.test/feed")
    sub = w.subscribe("ana@example.test", fid)
    w.write(fid, [w.entry(f"item {i}") for i in range(4)], at=T0 + timedelta(minutes=1))
    smtp_server.handler.script = lambda n: "550"  # her mailbox is broken for a while
    bad = await send_due(w.store, w.settings, T0 + timedelta(minutes=2), options=FAST)
    assert (bad.failed, bad.flagged, bad.cancelled) == (3, 1, 1)
    [listed] = repo.list_subscriptions(w.store)
    assert listed["flagged_at"] is not None

    # mended; she unsubscribes and subscribes again: the confirmation is tried and taken
    smtp_server.handler.script = lambda n: "250"
    repo.unsubscribe(w.store, T0 + timedelta(hours=1), manage_token=sub["manage_token"])
    again = repo.subscribe(w.store, "ana@example.test", fid, mode="realtime", hour=8, weekday=0,
                           tz=None, only=(), exclude=(), now=T0 + timedelta(hours=2))
    assert again.confirm_outbox_id is not None
    report = await send_due(w.store, w.settings, T0 + timedelta(hours=2), options=FAST)
    assert report.sent == 1
    [confirmation] = [r for r in smtp_server.accepted if r.rcpt == "ana@example.test"]
    assert "confirm" in str(confirmation.msg["Subject"]).lower()
    [listed] = repo.list_subscriptions(w.store)
    assert listed["flagged_at"] is None

    # confirmed: her new items reach her again
    repo.confirm(w.store, again.subscription["confirm_token"], T0 + timedelta(hours=3))
    w.write(fid, [w.entry("welcome back")], at=T0 + timedelta(hours=4))
    back = await send_due(w.store, w.settings, T0 + timedelta(hours=4), options=FAST)
    assert back.sent == 1
    assert smtp_server.accepted[-1].msg["Subject"].endswith("welcome back")


async def test_notify_flagged_address_stays_flagged_when_the_confirmation_bounces(
    mail_world, smtp_server
):
    w = mail_world
    fid = w.add_feed("https://a.example.test/feed")
    sub = w.subscribe("gone@example.test", fid)
    w.write(fid, [w.entry(f"item {i}") for i in range(3)], at=T0 + timedelta(minutes=1))
    smtp_server.handler.script = lambda n: "550"
    await send_due(w.store, w.settings, T0 + timedelta(minutes=2), options=FAST)
    repo.unsubscribe(w.store, T0 + timedelta(hours=1), manage_token=sub["manage_token"])
    again = repo.subscribe(w.store, "gone@example.test", fid, mode="realtime", hour=8,
                           weekday=0, tz=None, only=(), exclude=(), now=T0 + timedelta(hours=2))
    report = await send_due(w.store, w.settings, T0 + timedelta(hours=2), options=FAST)
    assert (report.sent, report.failed) == (0, 1)
    [listed] = repo.list_subscriptions(w.store)
    assert listed["flagged_at"] is not None
    [row] = [r for r in w.outbox() if r["id"] == again.confirm_outbox_id]
    assert row["status"] == "failed"
    assert "550" in row["last_error"]
    # an item for a flagged address is still not attempted (only a requested confirmation is)
    repo.confirm(w.store, again.subscription["confirm_token"], T0 + timedelta(hours=3))
    attempts = smtp_server.handler.attempts
    w.write(fid, [w.entry("into the void")], at=T0 + timedelta(hours=4))
    later = await send_due(w.store, w.settings, T0 + timedelta(hours=4), options=FAST)
    assert (later.sent, later.cancelled) == (0, 1)
    assert smtp_server.handler.attempts == attempts
