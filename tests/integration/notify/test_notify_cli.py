"""The ``fairfetch notify`` commands, end to end on a real SMTP sink."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta

from typer.testing import CliRunner

from fairfetch.cli import app
from fairfetch.notify.sink import MailSink
from fairfetch.store import notify_repo as repo
from fairfetch.store import open_store

from .conftest import World


def test_notify_cli_contract(tmp_path):
    db = f"sqlite:///{tmp_path}/cli.db"
    runner = CliRunner()
    with MailSink() as sink:
        env = {
            "FAIRFETCH_SMTP_URL": sink.smtp_url,
            "FAIRFETCH_PUBLIC_URL": "https://news.example.test",
            "FAIRFETCH_MAIL_FROM": "fairfetch <mail@news.example.test>",
            "FAIRFETCH_NOTIFY_RATE": "0",
        }

        def run(*args):
            result = runner.invoke(app, ["--db", db, "notify", *args], env=env)
            assert result.exit_code == 0, result.output + repr(result.exception)
            return result.output

        feed_url = "https://a.example.test/feed"
        run("subscribe", "Ana@Example.test", feed_url, "--mode", "weekly", "--hour", "7",
            "--weekday", "fri", "--tz", "America/New_York", "--except", "Sport,Ads")
        # the confirmation mail went out, linking to FAIRFETCH_PUBLIC_URL
        [mail] = sink.mails
        assert mail.rcpt_to == ("ana@example.test",)
        text = next(mail.message.iter_parts()).get_content()
        token = re.search(r"https://news\.example\.test/confirm/(\S+)", text).group(1)
        [sub] = json.loads(run("list", "--json"))
        assert sub["status"] == "pending"
        assert (sub["mode"], sub["hour"], sub["weekday"], sub["tz"], sub["except"]) == (
            "weekly", 7, 4, "America/New_York", ["sport", "ads"])
        assert sub["feed_url"] == feed_url
        run("confirm", token)
        assert json.loads(run("list", "--json"))[0]["status"] == "active"

        # the feed gets a new item (through the store, as the crawler writes it)
        store = open_store(db)
        w = World(store, None)  # type: ignore[arg-type]
        fid = store.get_feed(feed_url).id
        now = datetime.now(UTC)
        w.write(fid, [w.entry("backlog")], at=now - timedelta(days=10), first_crawl=True)
        w.subscribe("rt@example.test", fid, at=now - timedelta(days=9))
        w.write(fid, [w.entry("fresh", categories=["Tech"])], at=now - timedelta(days=8))
        w.write(fid, [w.entry("sport", categories=["Sport"])], at=now - timedelta(days=8))
        out = run("send-due", "--json")
        report = json.loads(out)
        # rt@ gets both items; Ana's weekly digest (due within the week) holds only "fresh"
        assert report["sent"] == 3
        subjects = sorted(str(m.message["Subject"]) for m in sink.mails[1:])
        assert subjects == [
            "Weekly digest: 1 new item from https://a.example.test/feed",
            "[https://a.example.test/feed] fresh",
            "[https://a.example.test/feed] sport",
        ]
        rows = json.loads(run("outbox", "--json"))
        assert {r["status"] for r in rows if r["kind"] != "confirm"} == {"sent"}
        assert "sent" in run("outbox")

        run("grant", "Publisher", "25", "--feed", feed_url)
        assert [(b["name"], b["balance"], b["feeds"]) for b in repo.balances(store)] == [
            ("Publisher", 25, [feed_url])]

        run("unsubscribe", "ana@example.test", feed_url)
        statuses = {s["email"]: s["status"] for s in json.loads(run("list", "--json"))}
        assert statuses == {"ana@example.test": "unsubscribed", "rt@example.test": "active"}
        store.close()

        bad = runner.invoke(app, ["--db", db, "notify", "subscribe", "x@y.test", feed_url,
                                  "--mode", "hourly"], env=env)
        assert bad.exit_code != 0


def test_notify_cli_confirms_a_token_that_starts_with_a_dash(tmp_path):
    """Tokens minted before they were kept dash-free can start with "-": `notify confirm`
    takes one as the token, not as an unknown option."""

    from fairfetch.store.tables_notify import notify_subscriptions

    db = f"sqlite:///{tmp_path}/cli.db"
    store = open_store(db)
    feed, _ = store.add_feed("https://a.example.test/feed", now=datetime.now(UTC),
                             politeness_key="a.example.test")
    res = repo.subscribe(store, "ana@example.test", feed.id, mode="realtime", hour=8, weekday=0,
                         tz="UTC", only=(), exclude=(), now=datetime.now(UTC))
    with store.engine.begin() as conn:
        conn.execute(notify_subscriptions.update()
                     .where(notify_subscriptions.c.id == res.subscription["id"])
                     .values(confirm_token="-old-style_token"))
    store.close()
    result = CliRunner().invoke(app, ["--db", db, "notify", "confirm", "-old-style_token"])
    assert result.exit_code == 0, result.output + repr(result.exception)
    assert "confirmed" in result.output
    listing = CliRunner().invoke(app, ["--db", db, "notify", "list", "--json"])
    assert json.loads(listing.output)[0]["status"] == "active"


def test_notify_cli_subscribe_says_a_refused_confirmation_failed(tmp_path, smtp_server):
    """A confirmation the mail server refuses for good (550 at RCPT) is not 'queued': nothing
    will retry it. The command says it failed, with the server's reason, and exits 1."""
    smtp_server.handler.script = lambda n: "rcpt:550"
    db = f"sqlite:///{tmp_path}/refused.db"
    env = {"FAIRFETCH_SMTP_URL": smtp_server.url, "FAIRFETCH_NOTIFY_RATE": "0",
           "FAIRFETCH_PUBLIC_URL": "https://news.example.test"}
    result = CliRunner().invoke(
        app, ["--db", db, "notify", "subscribe", "nobody@example.test",
              "https://a.example.test/feed"], env=env)
    assert result.exit_code == 1, result.output + repr(result.exception)
    assert "queued" not in result.output
    assert "confirmation mail to nobody@example.test failed" in result.stderr
    assert "no such user" in result.stderr
    assert smtp_server.accepted == []
