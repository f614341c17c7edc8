"""Review of 01c2284 (notify/routes.py: /outbox on a loopback relay shows to the admin).

``_admin`` takes the bearer token as Starlette reads the header (Latin-1) and compares it with
the setting; the API (web/api.py ``_admin``) decodes it with ``auth.header_text`` first, as
clients (curl, httpx) send a non-ASCII token as UTF-8 and the project supports such tokens
("секрет": see web/auth.py). So with ``admin_token = "секрет"`` the API takes
``Authorization: Bearer секрет`` and /outbox answers 404 to the same header (the cookie
works). Fixed: /outbox asks web/auth.py ``request_is_admin``, which reads the bearer as the
API does.
"""

from __future__ import annotations

import warnings
from datetime import UTC, datetime
from pathlib import Path

from fairfetch.config import Settings
from fairfetch.notify.subscriptions import SubscriptionRequest, request_subscription
from fairfetch.store import open_store
from fairfetch.web.app import create_app

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

TOKEN = "секрет"
READER = "ana.reader@example.test"


def test_review_s10_outbox_takes_a_non_ascii_admin_bearer_like_the_api(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path}/outbox.db")
    try:
        feed, _ = store.add_feed("http://a.test/feed", now=datetime.now(UTC),
                                 politeness_key="a.test")
        request_subscription(store, SubscriptionRequest.build(READER), feed.id)
        settings = Settings(admin_token=TOKEN, smtp_url="smtp://127.0.0.1:25")
        bearer = {"Authorization": f"Bearer {TOKEN}".encode()}
        with TestClient(create_app(settings, store)) as client:
            # The API takes this header as the admin's (a 404 for no such feed, not 403).
            assert client.delete("/api/v1/feeds/999999", headers=bearer).status_code == 404
            page = client.get("/outbox", headers=bearer)
    finally:
        store.close()
    assert page.status_code == 200
    assert READER in page.text
