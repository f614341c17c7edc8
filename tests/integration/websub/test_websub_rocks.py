"""The websub.rocks subscriber cases, rebuilt against a test hub of our own on loopback.

100-104 discovery, 200-202 topic self/redirects, 203-204 hub 307/308, 205 wrong-topic
verification, 300-302 signatures; plus the callback's other answers (unknown token, unsubscribed,
denied, re-verification, granted lease).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa
from aiohttp import web

from fairfetch.store import websub_repo as repo
from fairfetch.store.tables import crawls, entries
from fairfetch.websub import lease
from fairfetch.websub.hub_client import callback_url

from .conftest import Subscriber, TestHub

WAIT = 30.0  # a safety net against hangs, never a synchronisation device


def atom(hub: str | None, self_url: str | None, items: Sequence[str] = ()) -> bytes:
    links = ""
    if hub:
        links += f'<link rel="hub" href="{hub}"/>'
    if self_url:
        links += f'<link rel="self" href="{self_url}"/>'
    body = "".join(
        f"<entry><id>tag:pub.test,2026:{i}</id><title>post {i}</title>"
        f"<updated>2026-11-{10 + n:02d}T00:00:00Z</updated></entry>"
        for n, i in enumerate(items)
    )
    return (f'<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>pub</title>'
            f"<id>tag:pub.test,2026:feed</id><updated>2026-11-01T00:00:00Z</updated>"
            f"{links}{body}</feed>").encode()


def fixed(
    body: bytes, headers: dict[str, str] | None = None, content_type: str = "text/xml"
) -> Callable[[web.Request], web.Response]:
    def handler(_request: web.Request) -> web.Response:
        return web.Response(body=body, headers={"Content-Type": content_type, **(headers or {})})
    return handler


async def subscribe(sub: Subscriber, hub: TestHub, url: str, feed_id: int | None = None):
    outcome = await sub.service.subscribe_url(url, feed_id=feed_id)
    assert outcome.subscription is not None, outcome.detail
    v = await asyncio.wait_for(hub.verifications.get(), WAIT)
    rec = repo.get_subscription(sub.store, outcome.subscription.id)
    assert rec is not None
    return outcome, v, rec


# --- discovery 100-104  ---

async def test_websub_rocks_100_link_headers_only(
    subscriber: Subscriber, test_hub: TestHub
) -> None:
    self_url = test_hub.url("/t/100-self")
    link = f'<{test_hub.url("/hub")}>; rel="hub", <{self_url}>; rel="self"'
    test_hub.topics["/t/100"] = fixed(b"plain text, no markup", {"Link": link},
                                      content_type="text/plain")
    outcome, v, rec = await subscribe(subscriber, test_hub, test_hub.url("/t/100"))
    assert outcome.discovery.source == "headers"
    assert test_hub.requests[0].form["hub.topic"] == self_url
    assert (v.status, v.body) == (200, v.challenge)
    assert rec.state == "active"


async def test_websub_rocks_101_html_only(subscriber: Subscriber, test_hub: TestHub) -> None:
    html = (f'<!doctype html><html><head><link rel="hub" href="{test_hub.url("/hub")}">'
            f'<link rel="self" href="{test_hub.url("/t/101-self")}"></head><body>x</body></html>')
    test_hub.topics["/t/101"] = fixed(html.encode(), content_type="text/html")
    _, v, rec = await subscribe(subscriber, test_hub, test_hub.url("/t/101"))
    assert test_hub.requests[0].form["hub.topic"] == test_hub.url("/t/101-self")
    assert v.status == 200
    assert rec.state == "active"


async def test_websub_rocks_102_atom(subscriber: Subscriber, test_hub: TestHub) -> None:
    test_hub.topics["/t/102"] = fixed(atom(test_hub.url("/hub"), test_hub.url("/t/102-self")),
                                      content_type="text/plain")  # not judged by type
    _, _v, rec = await subscribe(subscriber, test_hub, test_hub.url("/t/102"))
    assert test_hub.requests[0].form["hub.topic"] == test_hub.url("/t/102-self")
    assert rec.state == "active"


async def test_websub_rocks_103_rss(subscriber: Subscriber, test_hub: TestHub) -> None:
    rss = (f'<?xml version="1.0"?><rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom">'
           f'<channel><title>r</title><atom:link rel="hub" href="{test_hub.url("/hub")}"/>'
           f'<atom:link rel="self" href="/t/103-self"/></channel></rss>')
    test_hub.topics["/t/103"] = fixed(rss.encode())
    _, _, rec = await subscribe(subscriber, test_hub, test_hub.url("/t/103"))
    assert rec.topic_url == test_hub.url("/t/103-self")
    assert rec.state == "active"


async def test_websub_rocks_104_headers_win(subscriber: Subscriber, test_hub: TestHub) -> None:
    body = atom("http://127.0.0.2:9/wrong-hub", test_hub.url("/t/104-body-self"))
    link = f'<{test_hub.url("/hub")}>; rel="hub", <{test_hub.url("/t/104-hdr-self")}>; rel="self"'
    test_hub.topics["/t/104"] = fixed(body, {"Link": link})
    _, _, rec = await subscribe(subscriber, test_hub, test_hub.url("/t/104"))
    assert rec.hub_url == test_hub.url("/hub")
    assert rec.topic_url == test_hub.url("/t/104-hdr-self")


async def test_websub_no_hub_no_subscription(subscriber: Subscriber, test_hub: TestHub) -> None:
    test_hub.topics["/t/none"] = fixed(atom(None, test_hub.url("/t/none")))
    outcome = await subscriber.service.subscribe_url(test_hub.url("/t/none"))
    assert outcome.subscription is None
    assert test_hub.requests == []


# --- topic 200-202  ---

async def test_websub_rocks_200_self_differs(subscriber: Subscriber, test_hub: TestHub) -> None:
    test_hub.topics["/t/200"] = fixed(atom(test_hub.url("/hub"), test_hub.url("/t/200-canonical")))
    _, _, rec = await subscribe(subscriber, test_hub, test_hub.url("/t/200?utm=x"))
    assert test_hub.requests[0].form["hub.topic"] == test_hub.url("/t/200-canonical")
    assert rec.topic_url != test_hub.url("/t/200?utm=x")


@pytest.mark.parametrize(("case", "code"), [("201", 302), ("202", 301)])
async def test_websub_rocks_201_202_topic_redirects(
    subscriber: Subscriber, test_hub: TestHub, case: str, code: int
) -> None:
    def redirect(_r: web.Request) -> web.Response:
        return web.Response(status=code, headers={"Location": f"/t/{case}-moved"})
    test_hub.topics[f"/t/{case}"] = redirect
    # the original location advertises nothing; only the final document's self counts
    test_hub.topics[f"/t/{case}-moved"] = fixed(
        atom(test_hub.url("/hub"), test_hub.url(f"/t/{case}-final-self")))
    _, v, rec = await subscribe(subscriber, test_hub, test_hub.url(f"/t/{case}"))
    assert rec.topic_url == test_hub.url(f"/t/{case}-final-self")
    assert v.status == 200
    assert rec.state == "active"


# --- hub 203-204  ---

@pytest.mark.parametrize(("case", "path"), [("203", "/hub-307"), ("204", "/hub-308")])
async def test_websub_rocks_203_204_hub_redirects(
    subscriber: Subscriber, test_hub: TestHub, case: str, path: str
) -> None:
    test_hub.topics[f"/t/{case}"] = fixed(atom(test_hub.url(path), test_hub.url(f"/t/{case}")))
    _, v, rec = await subscribe(subscriber, test_hub, test_hub.url(f"/t/{case}"))
    assert [r.path for r in test_hub.requests] == [path, "/hub"]
    # the same form, re-POSTed
    assert test_hub.requests[0].form == test_hub.requests[1].form
    assert test_hub.requests[1].form["hub.mode"] == "subscribe"
    assert rec.state == "active"
    assert v.status == 200


# --- 205: verification with the wrong topic  ---

async def test_websub_rocks_205_wrong_topic_is_404(
    subscriber: Subscriber, test_hub: TestHub
) -> None:
    test_hub.topics["/t/205"] = fixed(atom(test_hub.url("/hub"), test_hub.url("/t/205")))
    test_hub.verify_topic_override = test_hub.url("/t/some-other-topic")
    _, v, rec = await subscribe(subscriber, test_hub, test_hub.url("/t/205"))
    assert v.status == 404
    assert v.body == ""
    assert rec.state == "pending"


# --- the form we send  ---

async def test_websub_subscribe_form(subscriber: Subscriber, test_hub: TestHub) -> None:
    test_hub.topics["/t/f1"] = fixed(atom(test_hub.url("/hub"), test_hub.url("/t/f1")))
    test_hub.topics["/t/f2"] = fixed(atom(test_hub.url("/hub"), test_hub.url("/t/f2")))
    _, _, a = await subscribe(subscriber, test_hub, test_hub.url("/t/f1"))
    _, _, _b = await subscribe(subscriber, test_hub, test_hub.url("/t/f2"))
    fa, fb = test_hub.requests[0].form, test_hub.requests[1].form
    assert set(fa) == {"hub.callback", "hub.mode", "hub.topic", "hub.lease_seconds", "hub.secret"}
    assert fa["hub.callback"] == callback_url(subscriber.settings.public_url, a.callback_token)
    assert fa["hub.callback"] != fb["hub.callback"]          # fresh callback per subscription
    assert fa["hub.secret"] != fb["hub.secret"]              # fresh secret
    assert len(fa["hub.secret"].encode()) < 200
    assert len(a.callback_token) >= 40                       # unguessable
    assert int(fa["hub.lease_seconds"]) == subscriber.settings.websub_lease_seconds


async def test_websub_callback_query_string_kept(subscriber: Subscriber, test_hub: TestHub) -> None:
    subscriber.service.settings = subscriber.settings.replace(
        public_url=subscriber.base + "/?instance=a")
    test_hub.topics["/t/q"] = fixed(atom(test_hub.url("/hub"), test_hub.url("/t/q")))
    outcome = await subscriber.service.subscribe_url(test_hub.url("/t/q"))
    assert outcome.subscription is not None
    cb = test_hub.requests[0].form["hub.callback"]
    assert cb.endswith("?instance=a")
    v = await asyncio.wait_for(test_hub.verifications.get(), WAIT)
    assert v.status == 200


# --- lease  ---

async def test_websub_granted_lease_stored(subscriber: Subscriber, test_hub: TestHub) -> None:
    test_hub.lease_granted = 3600
    test_hub.topics["/t/l"] = fixed(atom(test_hub.url("/hub"), test_hub.url("/t/l")))
    _, _, rec = await subscribe(subscriber, test_hub, test_hub.url("/t/l"))
    assert rec.lease_seconds == 3600
    assert rec.verified_at is not None
    assert rec.lease_expires_at is not None
    assert rec.lease_expires_at - rec.verified_at == timedelta(seconds=3600)
    assert rec.next_action_at is not None
    offset = (rec.next_action_at - rec.verified_at).total_seconds()
    assert 1800 * (1 - lease.JITTER) <= offset <= 1800 * (1 + lease.JITTER)


async def test_websub_reverification_of_active_and_unsubscribe(
    subscriber: Subscriber, test_hub: TestHub
) -> None:
    test_hub.topics["/t/u"] = fixed(atom(test_hub.url("/hub"), test_hub.url("/t/u")))
    _, _, rec = await subscribe(subscriber, test_hub, test_hub.url("/t/u"))
    # renewal: the hub re-verifies an active subscription
    await subscriber.service.request(rec, "subscribe")
    v = await asyncio.wait_for(test_hub.verifications.get(), WAIT)
    assert v.status == 200
    current = repo.get_subscription(subscriber.store, rec.id)
    assert current is not None
    assert current.state == "active"
    # unsubscribe: verified, lease ignored
    await subscriber.service.unsubscribe(current)
    v = await asyncio.wait_for(test_hub.verifications.get(), WAIT)
    assert (v.mode, v.status, v.body) == ("unsubscribe", 200, v.challenge)
    done = repo.get_subscription(subscriber.store, rec.id)
    assert done is not None
    assert done.state == "unsubscribed"
    assert test_hub.subscribers == {}
    # a delivery for it now gets 410 Gone
    status, _ = await test_hub.deliver(test_hub.requests[0].form["hub.callback"], b"x",
                                       secret=rec.secret)
    assert status == 410


async def test_websub_verification_mismatches_are_404(
    subscriber: Subscriber, test_hub: TestHub
) -> None:
    test_hub.topics["/t/m"] = fixed(atom(test_hub.url("/hub"), test_hub.url("/t/m")))
    _, _, rec = await subscribe(subscriber, test_hub, test_hub.url("/t/m"))
    cb = test_hub.requests[0].form["hub.callback"]
    session = test_hub._session
    assert session is not None
    good = {"hub.mode": "subscribe", "hub.topic": rec.topic_url, "hub.challenge": "abc",
            "hub.lease_seconds": "100"}
    async with session.get(cb, params=good) as resp:
        assert (resp.status, await resp.text()) == (200, "abc")
    cases = [
        {**good, "hub.mode": "unsubscribe"},                 # not what we asked for
        {**good, "hub.topic": rec.topic_url + "x"},          # wrong topic
        {k: v for k, v in good.items() if k != "hub.challenge"},
        {**good, "hub.mode": "publish"},
    ]
    for params in cases:
        async with session.get(cb, params=params) as resp:
            assert resp.status == 404, params
            assert await resp.text() == ""
    async with session.get(cb.replace(rec.callback_token, "nope"), params=good) as resp:
        assert resp.status == 404


async def test_websub_denied_falls_back_to_polling(
    subscriber: Subscriber, test_hub: TestHub
) -> None:
    test_hub.topics["/t/d"] = fixed(atom(test_hub.url("/hub"), test_hub.url("/t/d"), ["1"]))
    report = await subscriber.crawler.add([test_hub.url("/t/d")])
    assert report.added
    feed = subscriber.store.get_feed(test_hub.url("/t/d"))
    test_hub.deny_reason = "no subscriptions from you"
    _, v, rec = await subscribe(subscriber, test_hub, feed.url, feed_id=feed.id)
    assert v.mode == "denied"
    assert v.status == 200
    assert rec.state == "denied"
    assert rec.denied_reason == "no subscriptions from you"
    assert subscriber.store.get_feed(feed.id).next_crawl_at <= rec.updated_at  # due now


# --- 300-302: signatures  ---

async def _subscribed_feed(sub: Subscriber, hub: TestHub, name: str):
    doc = {"items": ["1"]}
    hub.topics[f"/t/{name}"] = lambda _r: web.Response(
        body=atom(hub.url("/hub"), hub.url(f"/t/{name}"), doc["items"]),
        headers={"Content-Type": "application/atom+xml"})
    report = await sub.crawler.add([hub.url(f"/t/{name}")])
    assert report.added, report
    feed = sub.store.get_feed(hub.url(f"/t/{name}"))
    _, _v, rec = await subscribe(sub, hub, feed.url, feed_id=feed.id)
    assert rec.state == "active"
    return feed, rec, doc


def _entry_ids(sub: Subscriber, feed_id: int) -> list[str]:
    with sub.store.engine.connect() as conn:
        return sorted(conn.execute(sa.select(entries.c.entry_id).where(
            entries.c.feed_id == feed_id)).scalars())


def _ping_crawls(sub: Subscriber, feed_id: int) -> int:
    with sub.store.engine.connect() as conn:
        return int(conn.execute(sa.select(sa.func.count()).where(
            crawls.c.feed_id == feed_id, crawls.c.trigger == "ping")).scalar_one())


async def test_websub_rocks_300_valid_signature_processed(
    subscriber: Subscriber, test_hub: TestHub
) -> None:
    feed, rec, doc = await _subscribed_feed(subscriber, test_hub, "300")
    assert _entry_ids(subscriber, feed.id) == ["tag:pub.test,2026:1"]
    doc["items"] = ["1", "2"]
    cb = callback_url(subscriber.settings.public_url, rec.callback_token)
    # a partial fat ping: only a preview of entry 2 — it must not become the truth
    partial = atom(None, None, ["2"])
    status, _ = await test_hub.deliver(cb, partial, secret=rec.secret, algo="sha512")
    assert status == 202
    await asyncio.wait_for(subscriber.service.wait_processed(1), WAIT)
    assert _entry_ids(subscriber, feed.id) == ["tag:pub.test,2026:1", "tag:pub.test,2026:2"]
    assert _ping_crawls(subscriber, feed.id) == 1
    assert repo.ping_counts(subscriber.store, rec.created_at) == {"accepted": 1}


async def test_websub_rocks_301_bad_signature_ignored(
    subscriber: Subscriber, test_hub: TestHub
) -> None:
    feed, rec, doc = await _subscribed_feed(subscriber, test_hub, "301")
    doc["items"] = ["1", "2"]
    cb = callback_url(subscriber.settings.public_url, rec.callback_token)
    for header in (None, "sha256=" + "0" * 64, "md5=abc"):
        kwargs = {"secret": "not-the-secret"} if header is None else {"signature": header}
        status, _ = await test_hub.deliver(cb, atom(None, None, ["2"]), **kwargs)
        assert 200 <= status < 300   # acknowledged, but ...
    # ... nothing queued, nothing re-fetched, nothing stored
    assert repo.delivery_counts(subscriber.store) == {}
    assert _ping_crawls(subscriber, feed.id) == 0
    assert _entry_ids(subscriber, feed.id) == ["tag:pub.test,2026:1"]
    assert repo.ping_counts(subscriber.store, rec.created_at) == {"rejected": 3}


async def test_websub_rocks_302_unsigned_rejected(
    subscriber: Subscriber, test_hub: TestHub
) -> None:
    feed, rec, doc = await _subscribed_feed(subscriber, test_hub, "302")
    doc["items"] = ["1", "2"]
    cb = callback_url(subscriber.settings.public_url, rec.callback_token)
    status, _ = await test_hub.deliver(cb, atom(None, None, ["2"]))
    assert not 200 <= status < 300
    assert repo.delivery_counts(subscriber.store) == {}
    assert _entry_ids(subscriber, feed.id) == ["tag:pub.test,2026:1"]
    # and the same body, signed, is processed: the rejection was the signature's doing
    status, _ = await test_hub.deliver(cb, atom(None, None, ["2"]), secret=rec.secret)
    assert status == 202
    await asyncio.wait_for(subscriber.service.wait_processed(1), WAIT)
    assert "tag:pub.test,2026:2" in _entry_ids(subscriber, feed.id)


async def test_websub_duplicate_pings_and_poll_store_one_entry(
    subscriber: Subscriber, test_hub: TestHub
) -> None:
    feed, rec, doc = await _subscribed_feed(subscriber, test_hub, "dup")
    doc["items"] = ["1", "2"]
    cb = callback_url(subscriber.settings.public_url, rec.callback_token)
    for _ in range(3):
        assert (await test_hub.deliver(cb, b"", secret=rec.secret))[0] == 202
    await asyncio.wait_for(subscriber.service.wait_processed(3), WAIT)
    await subscriber.crawler.refresh([feed.id])  # and a poll
    assert _entry_ids(subscriber, feed.id) == ["tag:pub.test,2026:1", "tag:pub.test,2026:2"]
    assert subscriber.store.get_feed(feed.id).entry_count == 2


async def test_websub_delivery_routed_by_callback_not_link_headers(
    subscriber: Subscriber, test_hub: TestHub
) -> None:
    feed_a, rec_a, doc_a = await _subscribed_feed(subscriber, test_hub, "ra")
    feed_b, _rec_b, _ = await _subscribed_feed(subscriber, test_hub, "rb")
    doc_a["items"] = ["1", "9"]
    cb_a = callback_url(subscriber.settings.public_url, rec_a.callback_token)
    body = atom(test_hub.url("/hub"), feed_b.url, ["7"])  # claims to be feed B
    assert (await test_hub.deliver(cb_a, body, secret=rec_a.secret))[0] == 202
    await asyncio.wait_for(subscriber.service.wait_processed(1), WAIT)
    assert _ping_crawls(subscriber, feed_a.id) == 1
    assert _ping_crawls(subscriber, feed_b.id) == 0


async def test_websub_unknown_callback_404(subscriber: Subscriber, test_hub: TestHub) -> None:
    status, _ = await test_hub.deliver(subscriber.base + "/websub/callback/nope", b"x",
                                       secret="s")
    assert status == 404


async def test_websub_named_ping_after_304_counts_stored_entry(
    subscriber: Subscriber, test_hub: TestHub
) -> None:
    """A YouTube-style ping for an entry we already have, when the re-fetch is answered 304."""
    yt_ns = "http://www.youtube.com/xml/schemas/2015"
    published = "2026-11-29T23:00:00+00:00"
    entry = (f"<entry><id>yt:video:abc</id><yt:videoId>abc</yt:videoId><title>v</title>"
             f"<published>{published}</published><updated>{published}</updated></entry>")
    doc = (f'<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom" xmlns:yt="{yt_ns}">'
           f'<title>ch</title><link rel="hub" href="{test_hub.url("/hub")}"/>'
           f'<link rel="self" href="{test_hub.url("/t/etag")}"/>{entry}</feed>').encode()

    def topic(request: web.Request) -> web.Response:
        if request.headers.get("If-None-Match") == '"v1"':
            return web.Response(status=304, headers={"ETag": '"v1"'})
        return web.Response(body=doc, headers={"ETag": '"v1"',
                                               "Content-Type": "application/atom+xml"})
    test_hub.topics["/t/etag"] = topic
    await subscriber.crawler.add([test_hub.url("/t/etag")])
    feed = subscriber.store.get_feed(test_hub.url("/t/etag"))
    assert feed.etag == '"v1"'
    _, _, rec = await subscribe(subscriber, test_hub, feed.url, feed_id=feed.id)
    subscriber.service.clock = lambda: datetime(2026, 11, 30, 0, 0, tzinfo=UTC)
    cb = callback_url(subscriber.settings.public_url, rec.callback_token)
    payload = (f'<feed xmlns="http://www.w3.org/2005/Atom" xmlns:yt="{yt_ns}">{entry}'
               f"</feed>").encode()
    status, _ = await test_hub.deliver(cb, payload, secret=rec.secret, algo="sha1")
    assert status == 200
    assert _ping_crawls(subscriber, feed.id) == 1
    with subscriber.store.engine.connect() as conn:
        last = conn.execute(sa.select(crawls.c.outcome).where(crawls.c.feed_id == feed.id)
                            .order_by(crawls.c.id.desc()).limit(1)).scalar_one()
    assert last == "not_modified"
