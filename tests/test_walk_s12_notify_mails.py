"""The mails a new reader receives, read raw off a real SMTP server on loopback (aiosmtpd).

Found walking through docs/notify.md as a newcomer: no mail said it was automatic (vacation
responders answered every notification), every date was in UTC whatever time zone the reader
gave, and every post of a feed without titles (Mastodon, micro.blog) arrived as
"[Feed] (untitled)".
"""

from __future__ import annotations

import asyncio
import email
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from email import policy
from typing import Any

import pytest

import fairfetch.store.notify_repo as repo  # registers the outbox hook
from fairfetch.config import Settings
from fairfetch.feeds.model import Entry
from fairfetch.notify import render
from fairfetch.notify.options import NotifyOptions
from fairfetch.notify.service import send_due
from fairfetch.notify.sink import LoopbackController
from fairfetch.notify.subscriptions import SubscriptionRequest, request_subscription
from fairfetch.store import CrawlWrite, open_store
from fairfetch.store.sql import SqlStore

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)  # a Monday
FAST = NotifyOptions(rate=0.0)
LINKS = render.Links("https://news.example.test")


class _Catch:
    def __init__(self) -> None:
        self.raw: list[bytes] = []
        self.lock = threading.Lock()

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        with self.lock:
            self.raw.append(envelope.original_content)
        return "250 OK"


@pytest.fixture
def smtp() -> Iterator[tuple[str, _Catch]]:
    handler = _Catch()
    ctl = LoopbackController(handler, hostname="127.0.0.1", port=0)
    ctl.start()
    try:
        yield f"smtp://127.0.0.1:{ctl.port}", handler
    finally:
        ctl.stop()


class _World:
    def __init__(self, url: str, smtp_url: str) -> None:
        self.store: SqlStore = open_store(url)
        self.settings = Settings(db=url, smtp_url=smtp_url, public_url="https://news.example.test",
                                 mail_from="fairfetch <mail@news.example.test>")
        self.n = 0

    def feed(self) -> int:
        feed, _ = self.store.add_feed("https://blog.example.test/feed.xml",
                                      now=T0 - timedelta(days=1), politeness_key="k")
        self.write(feed.id, [self.entry("backlog")], at=T0 - timedelta(days=1), first=True)
        return feed.id

    def entry(self, title: str | None, content: str = "<p>Body.</p>") -> Entry:
        self.n += 1
        return Entry(id=f"urn:t:{self.n}", title=title, link=f"https://blog.example.test/{self.n}",
                     published=T0 + timedelta(minutes=self.n), content=content)

    def write(self, feed_id: int, entries: list[Entry], *, at: datetime,
              first: bool = False) -> None:
        feed = self.store.get_feed(feed_id)
        self.store.write([CrawlWrite(
            feed_id=feed_id, url=feed.url, at=at, outcome="ok", politeness_key="k",
            feed_changes={"status": "ok", "last_success_at": at, "title": "Blog"}, entries=entries,
            first_crawl=first,
        )], self.settings)

    def pending(self, addr: str, feed_id: int, **kw: Any) -> dict[str, Any]:
        """As ``notify subscribe`` does: its confirmation mail queued."""
        req = SubscriptionRequest.build(addr, **kw)
        return request_subscription(self.store, req, feed_id, now=T0).subscription

    def reader(self, addr: str, feed_id: int, **kw: Any) -> None:
        sub = self.pending(addr, feed_id, **kw)
        repo.confirm(self.store, sub["confirm_token"], T0)
        for row in repo.due_outbox(self.store, T0 + timedelta(days=1), 100):
            if row["kind"] == "confirm" and row["email"] == addr:
                repo.cancel(self.store, row["id"], "test: confirmed directly")

    def send(self, at: datetime) -> None:
        asyncio.run(send_due(self.store, self.settings, at, options=FAST))


@pytest.fixture
def world(tmp_path: Any, smtp: tuple[str, _Catch]) -> Iterator[_World]:
    w = _World(f"sqlite:///{tmp_path}/walk.db", smtp[0])
    yield w
    w.store.close()


def _mails(handler: _Catch) -> list[Any]:
    return [email.message_from_bytes(r, policy=policy.default) for r in handler.raw]


def _parts(msg: Any) -> tuple[str, str]:
    text, html = list(msg.iter_parts())
    return text.get_content(), html.get_content()


def test_walk_every_mail_says_it_is_automatic(world: _World, smtp: tuple[str, _Catch]) -> None:
    """RFC 3834 ``Auto-Submitted: auto-generated`` on the confirmation, each item and each
    digest: a reader's out-of-office reply is not sent back for every notification."""
    fid = world.feed()
    world.pending("new@example.test", fid)  # its confirmation mail
    world.reader("ana@example.test", fid)
    world.reader("bob@example.test", fid, mode="daily", hour=8)
    world.write(fid, [world.entry("News")], at=T0)
    world.send(T0 + timedelta(days=2))
    mails = _mails(smtp[1])
    kinds = sorted(str(m["Subject"]).split(" ")[0] for m in mails)
    assert kinds == ["Confirm", "Daily", "[Blog]"]
    for m in mails:
        assert m["Auto-Submitted"] == "auto-generated", m["Subject"]
    # the header is written once and on the wire as it is (not folded, not encoded)
    for raw in smtp[1].raw:
        assert raw.count(b"\r\nAuto-Submitted: auto-generated\r\n") == 1


def test_walk_dates_are_in_the_readers_time_zone(world: _World,
                                                 smtp: tuple[str, _Catch]) -> None:
    """A Paris reader (real-time) and a Tokyo reader (daily digest) read the item's date on
    their own clock, named; a reader who gave no zone still reads UTC."""
    fid = world.feed()
    world.reader("paris@example.test", fid, tz="Europe/Paris")
    world.reader("tokyo@example.test", fid, mode="daily", hour=8, tz="Asia/Tokyo")
    world.reader("utc@example.test", fid)
    e = world.entry("Dated")
    world.write(fid, [e], at=T0)
    world.send(T0 + timedelta(days=2))
    by_to = {str(m["To"]): _parts(m) for m in _mails(smtp[1])}
    assert e.published is not None
    paris = e.published.astimezone(render._zone("Europe/Paris")).strftime("%Y-%m-%d %H:%M")
    tokyo = e.published.astimezone(render._zone("Asia/Tokyo")).strftime("%Y-%m-%d %H:%M")
    utc = e.published.strftime("%Y-%m-%d %H:%M")
    assert len({paris, tokyo, utc}) == 3
    for part in by_to["paris@example.test"]:
        assert f"{paris} CET" in part
        assert f"{utc} UTC" not in part
    for part in by_to["tokyo@example.test"]:
        assert f"{tokyo} JST" in part
        assert f"{utc} UTC" not in part
    for part in by_to["utc@example.test"]:
        assert f"{utc} UTC" in part


def test_walk_local_time_of_naive_and_unknown_zones() -> None:
    """Stored times are UTC (a naive one read back is UTC); a zone the reader's row holds but
    this machine's tzdata lacks falls back to UTC rather than failing the mail."""
    naive = datetime(2026, 7, 1, 12, 0)
    assert render.local_time(naive, "Europe/Paris") == "2026-07-01 14:00 CEST"
    assert render.local_time(naive.replace(tzinfo=UTC), None) == "2026-07-01 12:00 UTC"
    assert render.local_time(naive, "No/Such_Zone") == "2026-07-01 12:00 UTC"
    assert render.local_time(None, "Europe/Paris") == ""


def test_walk_untitled_entries_are_named_by_their_first_words(
    world: _World, smtp: tuple[str, _Catch]
) -> None:
    """A post without a title (every post of a Mastodon feed) is named by the start of its
    text, cut at a word, in the subject, the heading and the digest; a titled one keeps its
    title; one with neither title nor text is still "(untitled)"."""
    fid = world.feed()
    world.reader("rt@example.test", fid)
    world.reader("dg@example.test", fid, mode="daily", hour=8)
    long_post = ("<p>Just shipped the <b>new release</b> of our tiny static site generator, "
                 "with incremental builds and a much faster dev server.</p>")
    world.write(fid, [
        world.entry(None, long_post),
        world.entry("  ", "<p>Short toot.</p>"),
        world.entry("A real title", "<p>Short toot.</p>"),
        world.entry(None, ""),
    ], at=T0)
    world.send(T0 + timedelta(days=2))
    mails = _mails(smtp[1])
    subjects = sorted(str(m["Subject"]) for m in mails if str(m["To"]) == "rt@example.test")
    name = ("Just shipped the new release of our tiny static site generator, with…")
    assert subjects == sorted([
        f"[Blog] {name}",
        "[Blog] Short toot.",
        "[Blog] A real title",
        "[Blog] (untitled)",
    ])
    assert len(name) <= 71
    [digest] = [m for m in mails if str(m["To"]) == "dg@example.test"]
    text, html = _parts(digest)
    for part in (text, html):
        assert name in part
        assert "A real title" in part
        assert part.count("(untitled)") == 1


def test_walk_untitled_name_of_one_long_word() -> None:
    """A post of one word longer than the name (a bare URL) is cut inside it, not left empty."""
    url = "https://example.test/" + "x" * 120
    r = render.item({"email": "a@b.test", "manage_token": "M", "mode": "realtime"},
                    {"id": 1, "url": "https://b.test/f", "title": "B"},
                    {"title": None, "link": None, "content": f"<p>{url}</p>"}, LINKS)
    assert r.subject.startswith("[B] https://example.test/xxx")
    assert r.subject.endswith("…")
    assert len(r.subject) == len("[B] ") + 71
