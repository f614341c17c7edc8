"""Feeds with long non-ASCII titles, through a real SMTP server (aiosmtpd refuses a line over
RFC 5321's 1,000 octets with '500 Line too long', as servers do).

The subject and List-Id were written as one unfolded line: a title of emoji or CJK text, or a
3,000-character feed title, made a header line past the limit, the server refused the mail, and
the refusal (a 5xx without an enhanced code) failed it and counted against the reader: three
such items flagged an innocent reader, and every later mail to them failed unsent."""

from __future__ import annotations

from datetime import timedelta

from fairfetch.notify.service import send_due
from fairfetch.store import CrawlWrite
from fairfetch.store import notify_repo as repo

from .conftest import FAST, T0


async def test_notify_long_non_ascii_titles_are_delivered_and_count_nothing_against_the_reader(
    mail_world, smtp_server
):
    w = mail_world
    fid = w.add_feed("https://a.example.test/feed")
    feed = w.store.get_feed(fid)
    # the crawler names the feed as the feed names itself
    w.store.write([CrawlWrite(feed_id=fid, url=feed.url, at=T0 - timedelta(minutes=30),
                              outcome="ok", politeness_key="k",
                              feed_changes={"status": "ok", "title": "ブログ" * 400},
                              entries=[])])
    w.subscribe("ana@example.test", fid)
    w.subscribe("bob@example.test", fid, mode="daily", hour=10)
    w.write(fid, [w.entry("🍮" * 300), w.entry("日本語のタイトル" * 40), w.entry("é" * 600)],
            at=T0 + timedelta(minutes=1))

    report = await send_due(w.store, w.settings, T0 + timedelta(hours=2), options=FAST)

    assert (report.sent, report.failed, report.flagged) == (4, 0, 0), report.errors
    assert sorted(r.rcpt for r in smtp_server.accepted) == ["ana@example.test"] * 3 + [
        "bob@example.test"]
    for got in smtp_server.accepted:
        assert str(got.msg["Subject"]).endswith("…")
        assert str(got.msg["List-Id"]).endswith(".news.example.test>")
    assert all(s["flagged_at"] is None for s in repo.list_subscriptions(w.store))
    assert {r["status"] for r in w.outbox() if r["kind"] != "confirm"} == {"sent"}
