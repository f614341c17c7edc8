"""The confirmation mail and the "Subscribed" page say when a digest comes, and in which zone.

Found walking through the subscribe form: its time zone field starts at UTC, and the
confirmation mail and page said only "a daily digest" — a Paris reader who left UTC learnt it
when the digests came an hour or two off, with nothing earlier to show why.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from fairfetch.config import Settings
from fairfetch.notify import render
from fairfetch.notify.routes import router
from fairfetch.notify.schedule import describe
from fairfetch.notify.sink import MailSink
from fairfetch.store import open_store

LINKS = render.Links("https://news.example.test")
FEED = {"id": 3, "url": "https://blog.example.test/feed.xml", "title": "Example Blog"}


def test_walk_describe_names_hour_day_and_zone() -> None:
    assert describe("daily", 7, 0, "Europe/Paris") == "a daily digest at 07:00 (Europe/Paris)"
    assert describe("weekly", 18, 4, "Asia/Tokyo") == (
        "a weekly digest on Friday at 18:00 (Asia/Tokyo)")
    assert describe("daily", 8, 0, None) == "a daily digest at 08:00 (UTC)"
    # a real-time subscription has no hour nor zone to speak of
    assert describe("realtime", 8, 0, "Europe/Paris") == "each new item"


def test_walk_confirmation_mail_says_when_the_digest_comes() -> None:
    sub = {"email": "ana@example.test", "confirm_token": "C", "manage_token": "M",
           "mode": "weekly", "hour": 7, "weekday": 4, "tz": "Europe/Paris"}
    r = render.confirmation(sub, FEED, LINKS)
    for part in (r.text, r.html):
        assert "a weekly digest on Friday at 07:00 (Europe/Paris)" in part
    r = render.confirmation({**sub, "mode": "realtime"}, FEED, LINKS)
    for part in (r.text, r.html):
        assert "each new item" in part
        assert "07:00" not in part


@pytest.fixture
def site(tmp_path: Any) -> Iterator[SimpleNamespace]:
    url = f"sqlite:///{tmp_path}/form.db"
    store = open_store(url)
    sink = MailSink(store).start()
    settings = Settings(db=url, smtp_url=sink.smtp_url, public_url="https://news.example.test")
    feed, _ = store.add_feed(FEED["url"], now=datetime(2026, 3, 1, tzinfo=UTC),
                             politeness_key="k")
    app = FastAPI()
    app.state.fairfetch = SimpleNamespace(settings=settings, store=store)
    app.include_router(router)
    try:
        with TestClient(app) as client:
            yield SimpleNamespace(client=client, sink=sink, feed_id=feed.id)
    finally:
        sink.stop()
        store.close()


def test_walk_form_left_at_utc_is_said_in_mail_and_page(site: SimpleNamespace) -> None:
    r = site.client.post("/subscribe", data={"feed": str(site.feed_id), "email": "a@example.test",
                                             "mode": "daily", "hour": "9"})
    assert r.status_code == 200, r.text
    [mail] = site.sink.mails
    text = next(mail.message.iter_parts()).get_content()
    assert "a daily digest at 09:00 (UTC)" in text
    link = re.search(r"https://news\.example\.test(/confirm/\S+)", text)
    assert link is not None
    page = site.client.post(link.group(1))
    assert page.status_code == 200
    assert "a daily digest at 09:00 (UTC)" in page.text
