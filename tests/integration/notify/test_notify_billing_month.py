"""A month of mixed real-time and digest activity, billed, against a ledger computed by hand."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta

from fairfetch.notify.service import send_due
from fairfetch.store import notify_repo as repo

from .conftest import FAST

FEB1 = datetime(2026, 2, 1, tzinfo=UTC)  # a Sunday


async def test_notify_month_of_charges_matches_the_hand_computed_ledger(mail_world, smtp_server):
    w = mail_world
    a = w.add_feed("https://a.example.test/feed", at=FEB1)  # sponsored by P (plenty of credit)
    b = w.add_feed("https://b.example.test/feed", at=FEB1)  # nobody's
    c = w.add_feed("https://c.example.test/feed", at=FEB1)  # sponsored by Q (2 credits)
    p = repo.grant(w.store, "P", 100, FEB1, feed_ids=[a])["id"]
    q = repo.grant(w.store, "Q", 2, FEB1, feed_ids=[c])["id"]
    subs = {
        "r1": [w.subscribe("r1@example.test", a, at=FEB1)],
        "r2": [w.subscribe("r2@example.test", f, at=FEB1, mode="daily", hour=8) for f in (a, b)],
        "r3": [w.subscribe("r3@example.test", f, at=FEB1, mode="weekly", hour=9, weekday=0)
               for f in (a, c)],
        "r4": [w.subscribe("r4@example.test", c, at=FEB1)],
    }
    reader = {name: s[0]["reader_id"] for name, s in subs.items()}

    for day in range(1, 32):  # Feb 1 .. Mar 3
        start = FEB1 + timedelta(days=day - 1)
        if day <= 28:
            w.write(a, [w.entry(f"A{day}")], at=start.replace(hour=10))
            if day % 2 == 0:
                w.write(b, [w.entry(f"B{day}a"), w.entry(f"B{day}b")],
                        at=start.replace(hour=11))
            if day % 5 == 0:
                w.write(c, [w.entry(f"C{day}")], at=start.replace(hour=12))
        await send_due(w.store, w.settings, start.replace(hour=23, minute=59), options=FAST)

    assert not [r for r in w.outbox() if r["status"] == "pending"]
    charges: Counter[tuple[str, int]] = Counter()
    for row in repo.ledger(w.store):
        if row["kind"] == "charge":
            party = ("publisher", row["publisher_id"]) if row["publisher_id"] else (
                "reader", row["reader_id"])
            charges[party] += row["amount"]
    # By hand:
    # P: r1 gets 28 real-time mails of A (28); r2 gets 28 daily issues, each with an A item (28);
    #    r3 gets 5 weekly issues (Feb 2, 9, 16, 23, Mar 2), each with A items (5): 61.
    # Q: r4's real-time C5 (1), then r3's Feb 9 issue holding C5 (1): its 2 credits are gone.
    # r2 pays for the 14 issues holding B items (B on even days); never for A.
    # r3 pays for the issues of Feb 16, 23 and Mar 2, which hold C items Q can no longer pay.
    # r4 pays for C10, C15, C20, C25 (4). r1 pays nothing.
    assert charges == Counter({
        ("publisher", p): -61,
        ("publisher", q): -2,
        ("reader", reader["r2"]): -14,
        ("reader", reader["r3"]): -3,
        ("reader", reader["r4"]): -4,
    })
    balances = {x["name"]: x["balance"] for x in repo.balances(w.store)}
    assert balances == {"P": 39, "Q": 0}
    # a digest never charges the publisher more than real-time would have: P paid 28 + 5 for
    # digests carrying 28 + 28 items of A
    sent = [(g.rcpt, g.msg) for g in smtp_server.accepted]
    assert len([m for r, m in sent if r == "r2@example.test"]) == 28
    assert len([m for r, m in sent if r == "r3@example.test"]) == 5
    # readers are told when a sponsor's credit ran out, and nothing was dropped
    r4_mails = [m for r, m in sent if r == "r4@example.test"]
    assert len(r4_mails) == 5
    told = ["credit has run out" in next(m.iter_parts()).get_content() for m in r4_mails]
    assert told == [False, True, True, True, True]
    r3_told = ["credit has run out" in next(m.iter_parts()).get_content()
               for r, m in sent if r == "r3@example.test"]
    assert r3_told == [False, False, True, True, True]
