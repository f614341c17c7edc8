"""Interop with a real hub: flask-websub's, on loopback, Celery in eager mode (memory broker),
SQLite storage. Subscribe, verify, receive a signed delivery (its default sha512), renew,
unsubscribe — against our own callback app served by uvicorn."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from werkzeug.serving import make_server

from fairfetch.store import websub_repo as repo
from fairfetch.store.tables import crawls, entries
from fairfetch.store.tables_websub import websub_pings

from .conftest import Subscriber

flask = pytest.importorskip("flask")
celery_mod = pytest.importorskip("celery")
flask_websub_hub = pytest.importorskip("flask_websub.hub")

WAIT = 30.0


@dataclass
class FlaskHub:
    base: str
    hub: Any
    storage: Any
    items: list[str]

    @property
    def topic(self) -> str:
        return self.base + "/topic"


def _feed(base: str, items: list[str]) -> bytes:
    body = "".join(
        f"<entry><id>tag:interop.test,2026:{i}</id><title>item {i}</title>"
        f"<updated>2026-11-{10 + n:02d}T00:00:00Z</updated></entry>" for n, i in enumerate(items))
    return (f'<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>interop</title>'
            f"<id>tag:interop.test,2026:feed</id><updated>2026-11-01T00:00:00Z</updated>"
            f'<link rel="hub" href="{base}/hub"/><link rel="self" href="{base}/topic"/>'
            f"{body}</feed>").encode()


@pytest.fixture
def flask_hub(tmp_path: Path) -> Iterator[FlaskHub]:
    from celery import Celery
    from flask import Flask, Response
    from flask_websub.hub import Hub, SQLite3HubStorage

    app = Flask("fairfetch-interop-hub")
    app.config.update(PUBLISH_SUPPORTED=True, HUB_MIN_LEASE_SECONDS=60,
                      HUB_DEFAULT_LEASE_SECONDS=1800, HUB_MAX_LEASE_SECONDS=3600)
    celery = Celery("fairfetch-interop", broker="memory://", backend="cache+memory://")
    celery.conf.update(task_always_eager=True)
    storage = SQLite3HubStorage(str(tmp_path / "hub.sqlite3"))
    hub = Hub(storage, celery, REQUEST_TIMEOUT=10, MAX_ATTEMPTS=1)
    app.register_blueprint(hub.build_blueprint(url_prefix="/hub"))
    server = make_server("127.0.0.1", 0, app, threaded=True)
    base = f"http://127.0.0.1:{server.server_port}"
    state = FlaskHub(base, hub, storage, ["1"])

    @app.route("/topic")
    def topic() -> Response:
        # Served without gzip: the hub forwards Content-Encoding over the body it decoded.
        return Response(_feed(base, state.items), content_type="application/atom+xml", headers={
            "Link": f'<{base}/hub>; rel="hub", <{base}/topic>; rel="self"'})

    thread = threading.Thread(target=server.serve_forever, name="flask-websub-hub", daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        thread.join()


def _entry_ids(sub: Subscriber, feed_id: int) -> list[str]:
    with sub.store.engine.connect() as conn:
        return sorted(conn.execute(
            sa.select(entries.c.entry_id).where(entries.c.feed_id == feed_id)).scalars())


async def test_websub_flask_hub_full_lifecycle(subscriber: Subscriber, flask_hub: FlaskHub) -> None:
    report = await subscriber.crawler.add([flask_hub.topic])
    assert report.added, report
    feed = subscriber.store.get_feed(flask_hub.topic)
    assert _entry_ids(subscriber, feed.id) == ["tag:interop.test,2026:1"]

    # subscribe + verification (the hub verifies before it answers 202, in eager mode)
    outcome = await subscriber.service.subscribe_feed(feed.id)
    assert outcome.subscription is not None, outcome.detail
    sub = repo.get_subscription(subscriber.store, outcome.subscription.id)
    assert sub is not None
    assert sub.state == "active", sub.last_error
    assert sub.topic_url == flask_hub.topic
    assert sub.lease_seconds == 3600  # we asked for a week; the hub granted its maximum
    callbacks = list(flask_hub.storage.get_callbacks(flask_hub.topic))
    assert [c[0] for c in callbacks] == [
        subscriber.settings.public_url + "/websub/callback/" + sub.callback_token]
    assert callbacks[0][1] == sub.secret

    # a signed delivery (flask-websub's default: sha512) triggers a re-fetch through the crawler
    flask_hub.items = ["1", "2"]
    await asyncio.to_thread(flask_hub.hub.send_change_notification.delay, flask_hub.topic)
    await asyncio.wait_for(subscriber.service.wait_processed(1), WAIT)
    assert _entry_ids(subscriber, feed.id) == ["tag:interop.test,2026:1", "tag:interop.test,2026:2"]
    with subscriber.store.engine.connect() as conn:
        pings = conn.execute(sa.select(websub_pings.c.outcome, websub_pings.c.detail)).all()
        ping_crawls = conn.execute(sa.select(sa.func.count()).where(
            crawls.c.feed_id == feed.id, crawls.c.trigger == "ping")).scalar_one()
    assert [(p.outcome, p.detail) for p in pings] == [("accepted", "queued sha512")]
    assert ping_crawls == 1

    # renew: the hub re-verifies the active subscription; the lease restarts
    before = sub.verified_at
    renewed = await subscriber.service.request(sub, "subscribe")
    assert renewed.state == "active"
    assert renewed.verified_at is not None
    assert before is not None
    assert renewed.verified_at > before
    assert renewed.next_action_at is not None
    assert renewed.lease_expires_at is not None
    assert renewed.verified_at < renewed.next_action_at < renewed.lease_expires_at

    # unsubscribe: verified by the hub, which then forgets us
    gone = await subscriber.service.unsubscribe(renewed)
    assert gone.state == "unsubscribed"
    assert list(flask_hub.storage.get_callbacks(flask_hub.topic)) == []
