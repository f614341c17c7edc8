"""An address is flagged after 3 hard failures IN A ROW: a mail the server took in between
resets the count, also within one pass.

The sender skipped that reset when the reader had no failure when the pass read its rows (to
save a write per mail), so failures and successes alternating within one pass added up: a
reader whose server refused one mail in two was flagged at the third refusal, and every mail
after it failed unsent."""

from __future__ import annotations

from datetime import timedelta

from fairfetch.notify.service import send_due
from fairfetch.store import notify_repo as repo

from .conftest import FAST, T0


async def test_notify_mails_taken_between_refusals_reset_the_count_within_a_pass(
    mail_world, smtp_server
):
    w = mail_world
    fid = w.add_feed("https://a.example.test/feed")
    w.subscribe("ana@example.test", fid)
    w.write(fid, [w.entry(f"item {i}") for i in range(6)], at=T0 + timedelta(minutes=1))
    smtp_server.handler.script = lambda n: "550" if n % 2 else "250"  # refused, taken, …

    r = await send_due(w.store, w.settings, T0 + timedelta(minutes=2), options=FAST)

    assert (r.sent, r.failed, r.flagged, r.cancelled) == (3, 3, 0, 0)
    [listed] = repo.list_subscriptions(w.store)
    assert listed["flagged_at"] is None
    assert [x["status"] for x in w.outbox() if x["kind"] == "item"] == [
        "failed", "sent", "failed", "sent", "failed", "sent"]


async def test_notify_three_refusals_in_a_row_within_a_pass_still_flag(mail_world, smtp_server):
    w = mail_world
    fid = w.add_feed("https://a.example.test/feed")
    w.subscribe("ana@example.test", fid)
    w.write(fid, [w.entry(f"item {i}") for i in range(5)], at=T0 + timedelta(minutes=1))
    smtp_server.handler.script = lambda n: "250" if n == 1 else "550"  # taken, then refused

    r = await send_due(w.store, w.settings, T0 + timedelta(minutes=2), options=FAST)

    assert (r.sent, r.failed, r.flagged) == (1, 3, 1)
    [listed] = repo.list_subscriptions(w.store)
    assert listed["flagged_at"] is not None
    assert [x["status"] for x in w.outbox() if x["kind"] == "item"] == [
        "sent", "failed", "failed", "failed", "failed"]
