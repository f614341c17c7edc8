"""A publisher moves to another hub (its feed's rel=hub changes): the subscription must follow,
or pushes stop for good while `feeds show` says "active" at a hub nobody publishes to.

Two test hubs of our own and our callback app on loopback; the renewal is made due by hand (the
half-lease moment) instead of waiting for it.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from aiohttp import web

from fairfetch.store import websub_repo as repo

from .conftest import Subscriber, TestHub, running_test_hub

WAIT = 30.0  # a safety net against hangs, never a synchronisation device


def _atom(hub: str, self_url: str) -> bytes:
    return (
        '<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>pub</title>'
        '<id>tag:pub.test,2026:feed</id><updated>2026-11-01T00:00:00Z</updated>'
        f'<link rel="hub" href="{hub}"/><link rel="self" href="{self_url}"/>'
        "<entry><id>tag:pub.test,2026:1</id><title>one</title>"
        "<updated>2026-11-10T00:00:00Z</updated></entry></feed>"
    ).encode()


async def _due_now(sub: Subscriber, sub_id: int) -> None:
    """The subscription's renewal falls due (half its lease has passed)."""
    await asyncio.to_thread(repo.update_subscription, sub.store, sub_id, datetime.now(UTC),
                            next_action_at=datetime.now(UTC))


async def test_websub_renewal_follows_a_hub_that_moved(
    subscriber: Subscriber, test_hub: TestHub
) -> None:
    topic = test_hub.url("/t/moving")
    advertised = {"hub": test_hub.url("/hub")}

    def serve(_request: web.Request) -> web.Response:
        return web.Response(body=_atom(advertised["hub"], topic), content_type="text/xml")

    test_hub.topics["/t/moving"] = serve
    report = await subscriber.crawler.add([topic])
    assert report.added == [topic], report
    feed_id = subscriber.store.get_feed(topic).id
    assert (await subscriber.service.tick())["subscribed"] == 1
    assert (await asyncio.wait_for(test_hub.verifications.get(), WAIT)).mode == "subscribe"
    old = repo.latest_for_feed(subscriber.store, feed_id)
    assert old is not None
    assert (old.state, old.hub_url) == ("active", test_hub.url("/hub"))

    async with running_test_hub() as new_hub:
        advertised["hub"] = new_hub.url("/hub")
        assert (await subscriber.crawler.refresh([feed_id])).counts["ok"] == 1
        assert subscriber.store.get_feed(feed_id).hub_urls == [new_hub.url("/hub")]
        await _due_now(subscriber, old.id)
        await subscriber.service.tick()
        assert (await asyncio.wait_for(new_hub.verifications.get(), WAIT)).mode == "subscribe"
        assert (await asyncio.wait_for(test_hub.verifications.get(), WAIT)).mode == "unsubscribe"

        new = repo.latest_for_feed(subscriber.store, feed_id)
        assert new is not None
        assert (new.state, new.hub_url, new.topic_url) == ("active", new_hub.url("/hub"), topic)
        assert new.callback_token != old.callback_token
        left = repo.get_subscription(subscriber.store, old.id)
        assert left is not None
        assert left.state == "unsubscribed"
        # the old hub was not asked to renew; each hub holds one subscription of ours
        assert [r.form["hub.mode"] for r in test_hub.requests] == ["subscribe", "unsubscribe"]
        assert len(new_hub.subscribers) == 1
        assert not test_hub.subscribers

        # nothing moved since: the next renewal is a plain renewal at the new hub
        gets = len(new_hub.requests)
        await _due_now(subscriber, new.id)
        await subscriber.service.tick()
        assert (await asyncio.wait_for(new_hub.verifications.get(), WAIT)).mode == "subscribe"
        again = repo.latest_for_feed(subscriber.store, feed_id)
        assert again is not None
        assert again.id == new.id
        assert [r.form["hub.mode"] for r in new_hub.requests[gets:]] == ["subscribe"]


async def test_websub_renewal_stays_when_the_feed_still_names_the_hub(
    subscriber: Subscriber, test_hub: TestHub
) -> None:
    topic = test_hub.url("/t/staying")
    hits: list[str] = []

    def serve(request: web.Request) -> web.Response:
        hits.append(request.path)
        return web.Response(body=_atom(test_hub.url("/hub"), topic), content_type="text/xml")

    test_hub.topics["/t/staying"] = serve
    await subscriber.crawler.add([topic])
    feed_id = subscriber.store.get_feed(topic).id
    await subscriber.service.tick()
    await asyncio.wait_for(test_hub.verifications.get(), WAIT)
    sub = repo.latest_for_feed(subscriber.store, feed_id)
    assert sub is not None
    before = len(hits)
    await _due_now(subscriber, sub.id)
    assert (await subscriber.service.tick())["renewed"] == 1
    await asyncio.wait_for(test_hub.verifications.get(), WAIT)
    assert len(hits) == before  # no discovery GET when the feed's hub list is unchanged
    after = repo.latest_for_feed(subscriber.store, feed_id)
    assert after is not None
    assert (after.id, after.state) == (sub.id, "active")
