"""A signed YouTube-style push may name any number of entries; each must still be decided and
the ping counted.

The callback asks the store which of the named entries it already holds, in one statement with
one parameter per entry: past 65,535 (a 3.5 MB push, well under the 10 MB cap) PostgreSQL's
protocol refuses the statement, the callback answered 503 from a StoreError, and the ping
landed in no bucket of websub_stats ("every ping lands in exactly one bucket"). The refetch of
the feed is refused by the perimeter here (pub.test resolves to 127.0.0.2, only 127.0.0.1 is
allowed), so nothing leaves the test and every entry is decided from the store alone.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from fairfetch.crawl.loop import Crawler
from fairfetch.feeds.model import Entry
from fairfetch.store import CrawlWrite, open_store
from fairfetch.store import websub_repo as repo
from fairfetch.websub.service import WebSubService
from fairfetch.websub.signature import sign

from .conftest import loopback_settings, subscribed_feed

T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
NAMED = 70_000


def _push(ids: list[str], published: datetime) -> bytes:
    stamp = published.strftime("%Y-%m-%dT%H:%M:%SZ")
    entries = "".join(
        f"<entry><id>{i}</id><yt:videoId>{i}</yt:videoId><published>{stamp}</published>"
        f"<updated>{stamp}</updated></entry>"
        for i in ids
    )
    return (
        '<feed xmlns="http://www.w3.org/2005/Atom" '
        f'xmlns:yt="http://www.youtube.com/xml/schemas/2015">{entries}</feed>'
    ).encode()


async def test_websub_push_naming_70000_entries_is_decided_and_counted(
    db_url: str, tmp_path: Any
) -> None:
    settings = loopback_settings(tmp_path, resolve=("pub.test:127.0.0.2",)).replace(db=db_url)
    store = open_store(db_url)
    feed, sub = subscribed_feed(store, T0 - timedelta(days=1))
    # Every named entry is stored, and each was published an hour ago (within give_up_after):
    # one the lookup missed would be "not in the feed yet" and the ping answered 503 to retry.
    stored = [f"v{i}" for i in range(NAMED)]
    store.write([CrawlWrite(
        feed_id=feed.id, url=feed.url, at=T0 - timedelta(minutes=30), outcome="ok",
        politeness_key="pub.test", feed_changes={"status": "ok"},
        entries=[Entry(id=i, title=i) for i in stored],
    )])  # fmt: skip
    crawler = Crawler(store, settings)
    service = WebSubService(store, settings, crawler=crawler, clock=lambda: T0)
    try:
        body = _push(stored, T0 - timedelta(hours=1))
        assert len(body) < settings.max_body_bytes
        answer = await service.receive(
            sub.callback_token, {"x-hub-signature": sign("k" * 40, body, "sha256")}, body
        )
    finally:
        await service.aclose()
        await crawler.aclose()
    # all found, every slice of the lookup: acknowledged
    assert answer.status == 200
    assert answer.outcome == "accepted"
    assert repo.ping_counts(store, T0 - timedelta(days=1)) == {"accepted": 1}
    store.close()
