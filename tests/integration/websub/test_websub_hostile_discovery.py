"""A feed that advertises a hub URL no parser can read (``http://[oops``): discovery raised
ValueError out of the upkeep pass, which then died on that feed on every pass — no feed after it
was ever subscribed, and the pass's own processing of queued pings never ran. Such a link is not
a hub; the rest of the pass goes on."""

from __future__ import annotations

import asyncio

from aiohttp import web

from fairfetch.store import websub_repo as repo
from fairfetch.websub.discovery import discover

from .conftest import Subscriber, TestHub

WAIT = 30.0  # a safety net against hangs, never a synchronisation device


def _atom(hub: str, self_url: str) -> bytes:
    return (
        '<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>pub</title>'
        f'<id>tag:pub.test,2026:{self_url}</id><updated>2026-11-01T00:00:00Z</updated>'
        f'<link rel="hub" href="{hub}"/><link rel="self" href="{self_url}"/>'
        "<entry><id>tag:pub.test,2026:1</id><title>one</title>"
        "<updated>2026-11-10T00:00:00Z</updated></entry></feed>"
    ).encode()


def _serve(body: bytes):
    def handler(_request: web.Request) -> web.Response:
        return web.Response(body=body, content_type="application/atom+xml")
    return handler


def test_websub_discovery_skips_unreadable_hub_urls() -> None:
    body = _atom("http://[oops", "https://pub.test/f")
    assert discover({}, body, "https://pub.test/f").found is False
    link = "<http://[oops>; rel=hub, <https://pub.test/f>; rel=self"
    assert discover({"Link": link}, b"", "https://pub.test/f").found is False
    # the other direction: a readable hub beside the unreadable one is still found
    both = link + ", <https://hub.test/>; rel=hub"
    found = discover({"Link": both}, b"", "https://pub.test/f")
    assert found.hubs == ("https://hub.test/",)
    assert found.self_url == "https://pub.test/f"


async def test_websub_upkeep_survives_a_feed_with_an_unreadable_hub(
    subscriber: Subscriber, test_hub: TestHub
) -> None:
    bad_url, good_url = test_hub.url("/t/bad"), test_hub.url("/t/good")
    test_hub.topics["/t/bad"] = _serve(_atom("http://[oops", bad_url))
    test_hub.topics["/t/good"] = _serve(_atom(test_hub.url("/hub"), good_url))
    for url in (bad_url, good_url):  # one by one: the ids follow this order
        report = await subscriber.crawler.add([url])
        assert len(report.added) == 1, report
    bad = subscriber.store.get_feed(bad_url)
    good = subscriber.store.get_feed(good_url)
    assert bad.id < good.id  # the bad one comes first in the pass

    counts = await subscriber.service.tick()
    assert counts["subscribed"] == 1
    v = await asyncio.wait_for(test_hub.verifications.get(), WAIT)
    assert (v.status, v.body) == (200, v.challenge)
    sub = repo.latest_for_feed(subscriber.store, good.id)
    assert sub is not None
    assert sub.state == "active"
    assert repo.latest_for_feed(subscriber.store, bad.id) is None


async def test_websub_upkeep_survives_a_hub_url_we_cannot_request(
    subscriber: Subscriber, test_hub: TestHub
) -> None:
    """A hub URL that parses but that nothing may fetch (a port past 65535): the Fetcher refuses
    it with InvalidURLError, which ended every upkeep pass on that feed — now that feed's
    subscription fails (recorded, with the reason) and the pass goes on to the next feed."""
    odd_url, good_url = test_hub.url("/t/odd"), test_hub.url("/t/good")
    test_hub.topics["/t/odd"] = _serve(_atom("http://hub.pub.test:99999/", odd_url))
    test_hub.topics["/t/good"] = _serve(_atom(test_hub.url("/hub"), good_url))
    for url in (odd_url, good_url):  # one by one: the ids follow this order
        report = await subscriber.crawler.add([url])
        assert len(report.added) == 1, report
    odd = subscriber.store.get_feed(odd_url)
    good = subscriber.store.get_feed(good_url)
    assert odd.id < good.id

    counts = await subscriber.service.tick()
    v = await asyncio.wait_for(test_hub.verifications.get(), WAIT)
    assert (v.status, v.body) == (200, v.challenge)
    sub = repo.latest_for_feed(subscriber.store, good.id)
    assert sub is not None
    assert sub.state == "active"
    failed = repo.latest_for_feed(subscriber.store, odd.id)
    assert failed is not None
    assert failed.state == "expired"  # polled at the normal interval
    assert failed.last_error is not None
    assert "99999" in failed.last_error
    assert counts["subscribed"] == 2  # both were offered to their hub; one hub was unusable
    # and the next pass does not die on it either
    await subscriber.service.tick()
