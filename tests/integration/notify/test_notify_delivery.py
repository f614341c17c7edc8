"""Delivery against a real SMTP server on loopback (aiosmtpd): throttling, dropped connections,
hard failures, digests whole, and a backlog that drains by itself after an outage."""

from __future__ import annotations

import email
from collections import Counter
from datetime import timedelta
from email import policy

import sqlalchemy as sa

from fairfetch.notify.service import send_due
from fairfetch.store import notify_repo as repo
from fairfetch.store.tables_notify import notify_digest_items, notify_outbox

from .conftest import FAST, T0


async def _drain(w, start, *, rounds=50):
    """send_due at advancing instants (the injectable clock), until nothing is pending."""
    now = start
    reports = []
    for _ in range(rounds):
        reports.append(await send_due(w.store, w.settings, now, options=FAST))
        pending = [r for r in w.outbox() if r["status"] == "pending"]
        if not pending:
            return reports
        now = max(now, min(r["due_at"] for r in pending))
    raise AssertionError(f"still pending after {rounds} passes")


def _subjects(server):
    return [r.msg["Subject"] for r in server.accepted]


async def test_notify_realtime_mail_end_to_end(mail_world, smtp_server):
    w = mail_world
    fid = w.add_feed("https://a.example.test/feed")
    w.subscribe("ana@example.test", fid)
    hostile = '<p>hi</p><script>alert("x")</script><img src="/a.png" onerror="evil()">'
    w.write(fid, [w.entry("Hello world", content=hostile)], at=T0 + timedelta(minutes=1))
    report = await send_due(w.store, w.settings, T0 + timedelta(minutes=2), options=FAST)
    assert report.sent == 1
    [got] = smtp_server.accepted
    assert got.rcpt == "ana@example.test"
    assert got.mail_from == "mail@news.example.test"
    msg = email.message_from_bytes(got.data, policy=policy.default)
    assert msg.get_content_type() == "multipart/alternative"
    text, html = [p.get_content() for p in msg.iter_parts()]
    assert [p.get_content_type() for p in msg.iter_parts()] == ["text/plain", "text/html"]
    assert msg["List-Unsubscribe"].startswith("<https://news.example.test/unsubscribe/")
    assert msg["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert msg["Subject"] == "[https://a.example.test/feed] Hello world"
    assert "<script" not in html.lower()
    assert "onerror" not in html.lower()
    assert "Hello world" in text
    [row] = [r for r in w.outbox() if r["kind"] == "item"]
    assert row["status"] == "sent"
    # nothing left to send: a second pass sends nothing again
    again = await send_due(w.store, w.settings, T0 + timedelta(hours=5), options=FAST)
    assert again.sent == 0
    assert len(smtp_server.accepted) == 1


async def test_notify_throttling_server_421_451_nothing_lost_nothing_twice(
    mail_world, smtp_server
):
    w = mail_world
    fid = w.add_feed("https://a.example.test/feed")
    w.subscribe("ana@example.test", fid)
    w.subscribe("bob@example.test", fid)
    w.write(fid, [w.entry(f"item {i}") for i in range(5)], at=T0 + timedelta(minutes=1))
    # the server throttles for a while: 421 at DATA, 451 at RCPT, in a pattern
    pattern = {1: "421", 2: "rcpt:451", 3: "421", 5: "rcpt:451", 6: "452", 9: "421"}
    smtp_server.handler.script = lambda n: pattern.get(n, "250")
    reports = await _drain(w, T0 + timedelta(minutes=2))
    assert sum(r.retried for r in reports) == len(pattern)
    assert sum(r.failed for r in reports) == 0
    subjects = Counter((r.rcpt, r.msg["Subject"]) for r in smtp_server.accepted)
    assert len(subjects) == 10  # every notification delivered
    assert set(subjects.values()) == {1}  # none twice
    assert all(r["status"] == "sent" for r in w.outbox() if r["kind"] == "item")
    # the backoff was recorded on the retried rows
    assert max(r["attempts"] for r in w.outbox()) >= 1


async def test_notify_dropped_connection_mid_message_is_retried(mail_world, smtp_server):
    w = mail_world
    fid = w.add_feed("https://a.example.test/feed")
    w.subscribe("ana@example.test", fid)
    w.write(fid, [w.entry(f"item {i}") for i in range(4)], at=T0 + timedelta(minutes=1))
    seen: list[str] = []
    smtp_server.handler.on_data = lambda got: seen.append(got.msg["Message-ID"])
    smtp_server.handler.script = lambda n: "drop" if n in (2, 3) else "250"
    reports = await _drain(w, T0 + timedelta(minutes=2))
    assert sum(r.retried for r in reports) == 2
    subjects = Counter(r.msg["Subject"] for r in smtp_server.accepted)
    assert len(subjects) == 4
    assert set(subjects.values()) == {1}
    # the retried message carried the same Message-ID as the transmission that was cut off
    counts = Counter(seen)
    assert sorted(counts.values()) == [1, 1, 2, 2]
    accepted_ids = Counter(r.msg["Message-ID"] for r in smtp_server.accepted)
    assert accepted_ids == Counter(dict.fromkeys(counts, 1))


async def test_notify_hard_failures_fail_the_message_and_flag_the_address(
    mail_world, smtp_server
):
    w = mail_world
    fid = w.add_feed("https://a.example.test/feed")
    w.subscribe("gone@example.test", fid)
    w.subscribe("ana@example.test", fid)
    w.write(fid, [w.entry(f"item {i}") for i in range(5)], at=T0 + timedelta(minutes=1))

    def script(n):
        return "250"

    # 550 for every message to gone@ (at DATA and at RCPT), the others are accepted
    handler = smtp_server.handler
    original_rcpt = handler.handle_RCPT

    async def rcpt(server, session, envelope, address, options):
        if address == "gone@example.test":
            handler.attempts += 1
            return "550 no such user"
        return await original_rcpt(server, session, envelope, address, options)

    handler.handle_RCPT = rcpt
    handler.script = script
    report = await send_due(w.store, w.settings, T0 + timedelta(minutes=2), options=FAST)
    rows = {(r["email"], r["status"]) for r in w.outbox() if r["kind"] == "item"}
    assert ("ana@example.test", "sent") in rows
    assert {r["status"] for r in w.outbox() if r["email"] == "gone@example.test"
            and r["kind"] == "item"} == {"failed"}
    # three hard failures flag the address; the remaining two are not even attempted
    assert report.failed == 3
    assert report.flagged == 1
    assert report.cancelled == 2
    assert len(smtp_server.accepted) == 5
    failed = [r for r in w.outbox() if r["email"] == "gone@example.test" and r["kind"] == "item"]
    assert sum("550" in (r["last_error"] or "") for r in failed) == 3
    assert sum("flagged" in (r["last_error"] or "") for r in failed) == 2


async def test_notify_550_at_data_fails_only_that_message(mail_world, smtp_server):
    w = mail_world
    fid = w.add_feed("https://a.example.test/feed")
    w.subscribe("ana@example.test", fid)
    w.write(fid, [w.entry(f"item {i}") for i in range(3)], at=T0 + timedelta(minutes=1))
    smtp_server.handler.script = lambda n: "550" if n == 2 else "250"
    report = await send_due(w.store, w.settings, T0 + timedelta(minutes=2), options=FAST)
    assert (report.sent, report.failed, report.flagged) == (2, 1, 0)
    statuses = [r["status"] for r in w.outbox() if r["kind"] == "item"]
    assert statuses == ["sent", "failed", "sent"]


async def test_notify_outage_backlog_drains_oldest_first(tmp_path, smtp_server):
    from .conftest import _world

    # the mail server is unreachable: an address where nothing listens on loopback
    w = _world(f"sqlite:///{tmp_path}/n.db", "smtp://127.0.0.1:1")
    fid = w.add_feed("https://a.example.test/feed")
    w.subscribe("ana@example.test", fid)
    for i in range(6):
        w.write(fid, [w.entry(f"item {i}")], at=T0 + timedelta(minutes=i))
    down = await send_due(w.store, w.settings, T0 + timedelta(minutes=10), options=FAST)
    assert (down.sent, down.retried, down.deferred) == (0, 1, True)
    assert all(r["status"] == "pending" for r in w.outbox() if r["kind"] == "item")
    # the server is back: the backlog drains by itself, oldest first
    w.settings = w.settings.replace(smtp_url=smtp_server.url)
    await _drain(w, T0 + timedelta(hours=2))
    assert _subjects(smtp_server) == [f"[https://a.example.test/feed] item {i}" for i in range(6)]
    w.store.close()


async def test_notify_rate_limit_paces_sends(mail_world, smtp_server):
    from fairfetch.notify.service import _Pacer

    slept: list[float] = []
    clock = [0.0]

    async def fake_sleep(s):
        slept.append(s)
        clock[0] += s

    pacer = _Pacer(4.0, clock=lambda: clock[0], sleep=fake_sleep)
    for _ in range(5):
        await pacer.wait()
    assert slept == [0.25] * 4


async def test_notify_digest_is_sent_whole_or_not_at_all(mail_world, smtp_server):
    w = mail_world
    f1 = w.add_feed("https://a.example.test/feed")
    f2 = w.add_feed("https://b.example.test/feed")
    w.subscribe("ana@example.test", f1, mode="daily", hour=8, tz="UTC")
    w.subscribe("ana@example.test", f2, mode="daily", hour=8, tz="UTC")
    w.write(f1, [w.entry(f"a{i}") for i in range(3)], at=T0)
    w.write(f2, [w.entry(f"b{i}") for i in range(2)], at=T0 + timedelta(hours=1))
    issue = T0.replace(hour=8) + timedelta(days=1)
    # not due before its time
    early = await send_due(w.store, w.settings, issue - timedelta(minutes=1), options=FAST)
    assert early.sent == 0
    smtp_server.handler.script = lambda n: "drop" if n == 1 else ("451" if n == 2 else "250")
    await _drain(w, issue)
    [got] = smtp_server.accepted  # one mail, once
    text = next(p for p in got.msg.iter_parts()).get_content()
    for t in ("a0", "a1", "a2", "b0", "b1"):
        assert t in text
    assert got.msg["Subject"].startswith("Daily digest: 5 new items")
    assert [r["status"] for r in w.outbox() if r["kind"] == "digest"] == ["sent"]


async def test_notify_item_added_to_an_issue_in_flight_moves_to_the_next(mail_world, smtp_server):
    w = mail_world
    fid = w.add_feed("https://a.example.test/feed")
    sub = w.subscribe("ana@example.test", fid, mode="daily", hour=8)
    w.write(fid, [w.entry("first")], at=T0)
    [issue] = [r for r in w.outbox() if r["kind"] == "digest"]
    late_entry = w.entry("late")
    w.write(fid, [late_entry], at=T0 + timedelta(minutes=1))  # same issue, through the hook
    with w.store.engine.begin() as conn:
        late_item = conn.execute(
            sa.select(notify_digest_items.c.id, notify_digest_items.c.entry_id)
            .order_by(notify_digest_items.c.id.desc())
        ).first()
        # detach it: it will be re-attached while the issue is on the wire
        conn.execute(notify_digest_items.delete().where(notify_digest_items.c.id == late_item.id))

    def while_in_flight(_got):
        with w.store.engine.begin() as conn:
            conn.execute(notify_digest_items.insert().values(
                outbox_id=issue["id"], subscription_id=sub["id"], entry_id=late_item.entry_id))

    smtp_server.handler.on_data = while_in_flight
    await send_due(w.store, w.settings, issue["due_at"], options=FAST)
    smtp_server.handler.on_data = None
    [got] = smtp_server.accepted
    assert "late" not in got.msg["Subject"] + next(got.msg.iter_parts()).get_content()
    digests = [r for r in w.outbox() if r["kind"] == "digest"]
    assert [d["status"] for d in digests] == ["sent", "pending"]
    with w.store.engine.connect() as conn:
        moved_to = conn.execute(
            sa.select(notify_digest_items.c.outbox_id).where(
                notify_digest_items.c.entry_id == late_item.entry_id)
        ).scalar_one()
    assert moved_to == digests[1]["id"]
    await send_due(w.store, w.settings, digests[1]["due_at"], options=FAST)
    assert "late" in next(smtp_server.accepted[1].msg.iter_parts()).get_content()


async def test_notify_unsubscribed_pending_items_are_cancelled_not_sent(mail_world, smtp_server):
    w = mail_world
    fid = w.add_feed("https://a.example.test/feed")
    sub = w.subscribe("ana@example.test", fid)
    w.write(fid, [w.entry("x")], at=T0 + timedelta(minutes=1))
    repo.unsubscribe(w.store, T0 + timedelta(minutes=2), manage_token=sub["manage_token"])
    report = await send_due(w.store, w.settings, T0 + timedelta(minutes=3), options=FAST)
    assert (report.sent, report.cancelled) == (0, 1)
    assert smtp_server.accepted == []
    with w.store.engine.connect() as conn:
        row = conn.execute(sa.select(notify_outbox).where(notify_outbox.c.kind == "item")).one()
    assert row.status == "cancelled"
    assert "unsubscribed" in row.last_error


async def test_notify_run_forever_delivers_and_stops(mail_world, smtp_server):
    import asyncio

    from fairfetch.notify.service import run_forever

    w = mail_world
    fid = w.add_feed("https://a.example.test/feed")
    w.subscribe("ana@example.test", fid)
    from datetime import UTC, datetime

    w.write(fid, [w.entry("live")], at=datetime.now(UTC))
    stop = asyncio.Event()
    got_one = asyncio.Event()
    loop = asyncio.get_running_loop()
    smtp_server.handler.on_data = lambda _got: loop.call_soon_threadsafe(got_one.set)
    task = asyncio.create_task(run_forever(w.store, w.settings, stop))
    await asyncio.wait_for(got_one.wait(), timeout=60)
    stop.set()
    await asyncio.wait_for(task, timeout=60)
    assert [r.msg["Subject"] for r in smtp_server.accepted] == [
        "[https://a.example.test/feed] live"]
