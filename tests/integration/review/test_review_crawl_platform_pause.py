"""Review of bcaf22a (crawl/loop.py: a domain's feeds on its platform's key).

Crawler._submit_page claims the page first (_claim_page), and there a Retry-After stored by an
earlier pass (shorter than DEFER_AFTER) is applied with ``pause_for(self._key_for(feed), left)``;
only afterwards does it learn the page's platforms (``_learn_platform``) and submit each feed
under ``self._key_for(feed)`` again. For a feed of a domain whose two hosts answered as a
platform, the pause goes to the domain's key ('letterbox.test') and the fetch to the platform's
('backend:letterbox'), which is not paused: the server's Retry-After is not honoured. (The
pause had been stored under the feed's stored key, as ``_save_pause(feed.politeness_key)``
does.) Before bcaf22a both were the domain's key.

No request leaves: the hosts resolve to 127.0.0.2, which the perimeter refuses."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from fairfetch.config import Settings
from fairfetch.crawl import Crawler, utcnow
from fairfetch.net.politeness import Dispatcher
from fairfetch.store import open_store
from fairfetch.store.politeness_repo import save_key_pauses

CAROL = "https://carol.letterbox.test/feed"


async def test_review_a_stored_pause_holds_the_key_the_feed_is_fetched_under(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = open_store(f"sqlite:///{tmp_path}/crawl.db")
    try:
        now = utcnow()
        for url, key in (("https://alice.letterbox.test/feed", "backend:letterbox"),
                         ("https://bob.letterbox.test/feed", "backend:letterbox"),
                         (CAROL, "letterbox.test")):
            store.add_feed(url, now=now - timedelta(minutes=1), politeness_key=key)
        # A Retry-After an earlier pass was given for carol's key, two seconds left (the
        # crawler's clock is held at ``now``, so a loaded machine cannot use them up).
        save_key_pauses(store, {"letterbox.test": now + timedelta(seconds=2)}, now)

        paused: list[str] = []
        put_keys: dict[str, str | None] = {}
        real_pause, real_put = Dispatcher.pause_for, Dispatcher.put

        def pause_for(self: Any, key: str, seconds: float) -> None:
            paused.append(key)
            real_pause(self, key, seconds)

        async def put(self: Any, url: str, item: Any, *, key: str | None = None) -> None:
            put_keys[url] = key
            await real_put(self, url, item, key=key)

        monkeypatch.setattr(Dispatcher, "pause_for", pause_for)
        monkeypatch.setattr(Dispatcher, "put", put)
        settings = Settings(db=store.url, allow_networks=("127.0.0.1/32",),
                            resolve=("*.letterbox.test:127.0.0.2",))
        async with Crawler(store, settings, clock=lambda: now) as crawler:
            await crawler.crawl_due()
        assert "letterbox.test" in paused or "backend:letterbox" in paused  # the pause was read
        assert put_keys[CAROL] in paused  # ... and holds the key carol is fetched under
    finally:
        store.close()
