"""/outbox lists every reader's address and what was mailed to them, to anyone who asks.

notify/routes.py serves it when ``smtp_url`` points at loopback, meaning the development sink
(`fairfetch notify sink`, the demo). But handing mail to a local MTA on 127.0.0.1:25 (Postfix,
an OpenSMTPD relay) is the common production set-up, and there the page is public on the
directory: a stranger reads every subscriber's address and the feeds they follow. The cause
was ``_local_mail`` in src/fairfetch/notify/routes.py: loopback says where mail goes, not that
it is a development sink. The page now shows once the development sink has captured mail into
the store, or to the admin.
"""

from __future__ import annotations

import warnings
from pathlib import Path

from fairfetch.config import Settings
from fairfetch.notify.subscriptions import SubscriptionRequest, request_subscription
from fairfetch.store import open_store
from fairfetch.web.app import create_app

from .conftest import TOKEN, add_crawled

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

READER = "ana.reader@example.test"


def test_web_outbox_is_no_public_list_of_readers_on_a_server_relaying_to_a_local_mta(
    tmp_path: Path,
) -> None:
    store = open_store(f"sqlite:///{tmp_path}/outbox.db")
    fid = add_crawled(store, "http://a.test/feed")
    # nothing is sent in this test: the confirmation stays in the outbox, unsent
    request_subscription(store, SubscriptionRequest.build(READER), fid)
    settings = Settings(admin_token=TOKEN, smtp_url="smtp://mailer:secret@127.0.0.1:25")
    with TestClient(create_app(settings, store)) as stranger:
        page = stranger.get("/outbox")
    store.close()
    assert page.status_code == 404
    assert READER not in page.text


def test_web_outbox_shows_to_the_admin_on_a_loopback_relay(tmp_path: Path) -> None:
    """The other direction: the operator, with the admin token, still sees it."""
    store = open_store(f"sqlite:///{tmp_path}/outbox.db")
    fid = add_crawled(store, "http://a.test/feed")
    request_subscription(store, SubscriptionRequest.build(READER), fid)
    settings = Settings(admin_token=TOKEN, smtp_url="smtp://mailer:secret@127.0.0.1:25")
    with TestClient(create_app(settings, store)) as admin:
        page = admin.get("/outbox", headers={"Authorization": f"Bearer {TOKEN}"})
    store.close()
    assert page.status_code == 200
    assert READER in page.text


def test_web_outbox_shows_while_this_processs_development_sink_is_the_mail_server(
    tmp_path: Path,
) -> None:
    """The demo's case: its sink runs in the process of the web app and has captured nothing
    yet (its readers are confirmed already, the first crawl notifies nobody); the page it
    points the user at must open. Stopped, the sink no longer stands for the server."""
    from fairfetch.notify.sink import MailSink

    store = open_store(f"sqlite:///{tmp_path}/outbox.db")
    fid = add_crawled(store, "http://a.test/feed")
    request_subscription(store, SubscriptionRequest.build(READER), fid)
    sink = MailSink(store).start()
    try:
        settings = Settings(admin_token=TOKEN, smtp_url=sink.smtp_url)
        with TestClient(create_app(settings, store)) as visitor:
            page = visitor.get("/outbox")
    finally:
        sink.stop()
    with TestClient(create_app(settings, store)) as visitor:
        after = visitor.get("/outbox")
    store.close()
    assert page.status_code == 200
    assert READER in page.text
    assert after.status_code == 404
