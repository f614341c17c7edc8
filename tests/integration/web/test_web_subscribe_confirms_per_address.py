"""The public form mails one address at most CONFIRMS_PER_ADDRESS_PER_DAY confirmations a day.

The hourly limit was per subscription: a stranger posting the form once per feed had every
feed's confirmation mailed to a victim's address — our server sending the spam, and our mail
reputation paying for it. Past the cap the subscription is kept pending, no mail is queued,
and the page says why; other addresses, the operator's CLI and the next day are not capped.
SQLite and PostgreSQL.
"""

from __future__ import annotations

import warnings
from datetime import UTC, datetime, timedelta

import sqlalchemy as sa

from fairfetch.config import Settings
from fairfetch.notify.subscriptions import SubscriptionRequest, request_subscription
from fairfetch.store import SqlStore, open_store
from fairfetch.store import notify_repo as repo
from fairfetch.store.tables_notify import notify_outbox
from fairfetch.web.app import create_app

from .conftest import add_crawled

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

CAP = repo.CONFIRMS_PER_ADDRESS_PER_DAY
VICTIM = "victim@example.test"


def _confirms(store: SqlStore, email: str) -> int:
    with store.engine.connect() as conn:
        return int(conn.execute(
            sa.text(
                "SELECT count(*) FROM notify_outbox o JOIN notify_readers r ON r.id = o.reader_id"
                " WHERE o.kind = 'confirm' AND r.email = :e"
            ),
            {"e": email},
        ).scalar_one())  # fmt: skip


def test_web_public_form_caps_confirmations_per_address_a_day(db_url: str) -> None:
    store = open_store(db_url)
    try:
        feeds = [add_crawled(store, f"http://f{i}.test/feed") for i in range(CAP + 2)]
        # the SMTP URL points at a loopback port nobody listens on: mails stay queued
        settings = Settings(admin_token="t", smtp_url="smtp://127.0.0.2:9")
        with TestClient(create_app(settings, store)) as stranger:
            pages = [
                stranger.post("/subscribe", data={"feed": str(fid), "email": VICTIM})
                for fid in feeds
            ]
            other = stranger.post("/subscribe", data={"feed": str(feeds[0]),
                                                      "email": "someone@example.test"})
        assert [p.status_code for p in pages] == [200] * (CAP + 2)
        assert all("confirmation mail is on its way" in p.text for p in pages[:CAP])
        assert all("as many confirmation mails today" in p.text for p in pages[CAP:])
        assert _confirms(store, VICTIM) == CAP
        subs = [s for s in repo.list_subscriptions(store) if s["email"] == VICTIM]
        assert len(subs) == CAP + 2
        assert {s["status"] for s in subs} == {"pending"}
        # the other direction: another address is not capped by the victim's count
        assert "on its way" in other.text
        assert _confirms(store, "someone@example.test") == 1
    finally:
        store.close()


def test_web_the_cap_is_the_public_forms_and_a_day_long(db_url: str) -> None:
    store = open_store(db_url)
    try:
        feeds = [add_crawled(store, f"http://g{i}.test/feed") for i in range(CAP + 2)]
        now = datetime.now(UTC)
        req = SubscriptionRequest.build(VICTIM)
        for fid in feeds[:CAP]:
            request_subscription(store, req, fid, now=now, confirms_per_day=CAP)
        capped = request_subscription(store, req, feeds[CAP], now=now, confirms_per_day=CAP)
        assert capped.address_throttled
        assert capped.confirm_outbox_id is None
        # the operator's CLI passes no cap
        cli = request_subscription(store, req, feeds[CAP + 1], now=now)
        assert cli.confirm_outbox_id is not None
        # a day later the form mails the waiting subscription's confirmation
        later = request_subscription(
            store, req, feeds[CAP], now=now + timedelta(days=1, minutes=1), confirms_per_day=CAP
        )
        assert later.confirm_outbox_id is not None
        with store.engine.connect() as conn:
            kinds = conn.execute(
                sa.select(sa.func.count()).select_from(notify_outbox)
                .where(notify_outbox.c.kind == "confirm")
            ).scalar_one()
        assert kinds == CAP + 2
    finally:
        store.close()
