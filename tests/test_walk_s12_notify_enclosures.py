"""A podcast's new episode, mailed: the audio is linked, with its type and size.

Found walking through docs/notify.md with a testbed podcast: each episode's mail had its title,
page and show notes but no link to the episode's audio (rss2email appends enclosures), and many
episodes have no page of their own — the reader had no way to play it from the mail.
"""

from __future__ import annotations

import asyncio
import email
import threading
from datetime import UTC, datetime, timedelta
from email import policy
from typing import Any

import fairfetch.store.notify_repo as repo  # registers the outbox hook
from fairfetch.config import Settings
from fairfetch.feeds.model import Enclosure, Entry
from fairfetch.notify import render
from fairfetch.notify.options import NotifyOptions
from fairfetch.notify.service import send_due
from fairfetch.notify.sink import LoopbackController
from fairfetch.store import CrawlWrite, open_store

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
LINKS = render.Links("https://news.example.test")
SUB = {"email": "ana@example.test", "manage_token": "M", "mode": "realtime"}
FEED = {"id": 1, "url": "https://pod.example.test/feed.xml", "title": "Pod"}


class _Catch:
    def __init__(self) -> None:
        self.raw: list[bytes] = []
        self.lock = threading.Lock()

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        with self.lock:
            self.raw.append(envelope.original_content)
        return "250 OK"


def test_walk_episode_mail_links_its_audio(tmp_path: Any) -> None:
    handler = _Catch()
    ctl = LoopbackController(handler, hostname="127.0.0.1", port=0)
    ctl.start()
    url = f"sqlite:///{tmp_path}/pod.db"
    store = open_store(url)
    try:
        settings = Settings(db=url, smtp_url=f"smtp://127.0.0.1:{ctl.port}",
                            public_url="https://news.example.test")
        feed, _ = store.add_feed(FEED["url"], now=T0 - timedelta(days=1), politeness_key="k")

        def write(entries: list[Entry], at: datetime, first: bool) -> None:
            store.write([CrawlWrite(
                feed_id=feed.id, url=feed.url, at=at, outcome="ok", politeness_key="k",
                feed_changes={"status": "ok", "last_success_at": at, "title": "Pod"},
                entries=entries, first_crawl=first)], settings)

        write([Entry(id="ep0", title="Episode 0", published=T0 - timedelta(days=2))],
              T0 - timedelta(days=1), True)
        sub = repo.subscribe(store, "ana@example.test", feed.id, mode="realtime", hour=8,
                             weekday=0, tz="UTC", only=(), exclude=(), now=T0).subscription
        repo.confirm(store, sub["confirm_token"], T0)
        for row in repo.due_outbox(store, T0 + timedelta(days=1), 10):
            repo.cancel(store, row["id"], "test: confirmed directly")
        write([Entry(id="ep1", title="Episode 1", published=T0, content="<p>Notes.</p>",
                     enclosures=[Enclosure("/audio/ep1.mp3", "audio/mpeg", 28_089_169)])],
              T0, False)
        asyncio.run(send_due(store, settings, T0 + timedelta(minutes=1),
                             options=NotifyOptions(rate=0.0)))
    finally:
        store.close()
        ctl.stop()
    [raw] = handler.raw
    text, html = (p.get_content() for p in
                  email.message_from_bytes(raw, policy=policy.default).iter_parts())
    audio = "https://pod.example.test/audio/ep1.mp3"
    assert f"Enclosure: {audio} (audio/mpeg, 28.1 MB)" in text
    assert f'<a href="{audio}">' in html
    assert "28.1 MB" in html


def test_walk_enclosures_only_http_and_none_when_absent() -> None:
    entry = {"title": "E", "link": "https://pod.example.test/e", "content": "<p>x</p>",
             "enclosures": [{"url": "javascript:alert(1)", "type": "audio/mpeg", "length": 1},
                            {"url": "data:audio/mpeg;base64,AAAA", "type": None, "length": None},
                            {"url": "https://cdn.example.test/v.mp4", "type": None,
                             "length": None}]}
    r = render.item(SUB, FEED, entry, LINKS)
    for part in (r.text, r.html):
        assert "javascript:" not in part
        assert "data:audio" not in part
        assert part.count("Enclosure:") == 1
        assert "https://cdn.example.test/v.mp4" in part
    assert "Enclosure: https://cdn.example.test/v.mp4\n" in r.text  # no "()" without type/size
    for bare in ({**entry, "enclosures": []}, {k: v for k, v in entry.items()
                                               if k != "enclosures"}):
        r = render.item(SUB, FEED, bare, LINKS)
        assert "Enclosure" not in r.text
        assert "Enclosure" not in r.html
