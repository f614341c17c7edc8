"""Review of ea008ed (store/types.KeyText on entries.entry_id; store/notify_outbox._news_entries).

An entry id over 2,000 UTF-8 bytes is now stored shortened: its head, '…#' and a digest of the
whole id. _news_entries looks for the other spellings of a new entry's id (http/https, www.,
a trailing slash: notify/newness.identity_variants) to tell a feed that moved from a new item,
but it derives them from the id as stored: variants of the shortened form, whose digest is
the new spelling's, never equal the old spelling's stored form, whose digest is of the old
spelling. So a feed of long URL ids that moves to https mails every reader each item again.
(test_notify_dedupe_across_polls_pings_and_url_changes checks this with short ids only.)
Before ea008ed both ids were stored whole and the moved entry was no news."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from fairfetch.config import Settings
from fairfetch.feeds.model import Entry
from fairfetch.store import CrawlWrite, open_store
from fairfetch.store import notify_repo as repo

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
PATH = "/post/" + "p" * 2100  # the id is over the store's 2,000-byte budget


@pytest.mark.parametrize(
    ("second", "mailed"),
    [
        # The feed moved to https and dropped www.: the id changed spelling, not identity.
        ("https://site.example.test" + PATH, 1),
        # A path differing in case is another item (a case-blind match would drop it).
        ("https://site.example.test" + PATH.upper(), 2),
    ],
)
def test_review_a_long_url_id_respelled_by_a_move_to_https_is_no_news(
    db_url: str, second: str, mailed: int
) -> None:
    store = open_store(db_url)
    settings = Settings(db=db_url, smtp_url="smtp://127.0.0.1:9",
                        public_url="https://news.example.test",
                        mail_from="fairfetch <mail@news.example.test>")
    try:
        feed, _ = store.add_feed("https://a.example.test/feed", now=T0 - timedelta(days=1),
                                 politeness_key="k")

        def write(eid: str, at: datetime, first: bool = False) -> int:
            [res] = store.write([CrawlWrite(
                feed_id=feed.id, url=feed.url, at=at, outcome="ok", politeness_key="k",
                feed_changes={"status": "ok", "last_success_at": at},
                entries=[Entry(id=eid, title="once", link="https://site.example.test/1",
                               content="<p>once</p>")],
                first_crawl=first)], settings)
            return res.new_entries

        write("urn:backlog", T0 - timedelta(days=1), first=True)
        sub = repo.subscribe(store, "ana@example.test", feed.id, mode="realtime", hour=8,
                             weekday=0, tz="UTC", only=(), exclude=(), now=T0).subscription
        repo.confirm(store, sub["confirm_token"], T0)

        def items() -> int:
            return sum(1 for r in repo.list_outbox(store, limit=1000) if r["kind"] == "item")

        assert write("http://www.site.example.test" + PATH, T0 + timedelta(minutes=1)) == 1
        assert items() == 1  # the item, mailed once
        assert write(second, T0 + timedelta(minutes=2)) == 1
        assert items() == mailed
    finally:
        store.close()
