"""The testbed over real HTTP: conditional requests, the shared platform limit, stats, the clock,
redirects, errors and hostile bodies, each seen the way a crawler sees it."""

from __future__ import annotations

import asyncio
import email.utils
import json
import time
import zlib

import aiohttp
import feedparser
import pytest
from lxml import etree

from fairfetch.testing import Testbed, running_testbed

from .conftest import SMALL, fetch


def _one(tb: Testbed, behaviour: str):
    return tb.catalog(n=1, behaviours=[behaviour])[0]


async def test_etag_gives_304_and_a_new_entry_gives_200(
    testbed: Testbed, client: aiohttp.ClientSession
) -> None:
    spec = _one(testbed, "blog")
    status, headers, body = await fetch(client, spec.url)
    assert status == 200
    assert body
    etag, lastmod = headers["ETag"], headers["Last-Modified"]
    status, headers, body = await fetch(client, spec.url, headers={"If-None-Match": etag})
    assert (status, body) == (304, b"")
    assert headers["ETag"] == etag
    # A stale tag is not a match, even with a matching date (If-None-Match decides).
    status, _, _ = await fetch(
        client, spec.url, headers={"If-None-Match": '"stale"', "If-Modified-Since": lastmod}
    )
    assert status == 200
    assert spec.period is not None
    testbed.clock.advance(spec.period)
    status, headers, body = await fetch(client, spec.url, headers={"If-None-Match": etag})
    assert status == 200
    assert headers["ETag"] != etag
    stats = await testbed.stats()
    host = stats["hosts"][spec.host]
    assert host["requests"] == 4
    assert host["conditional_requests"] == 3
    assert host["conditional_hits"] == 1


async def test_last_modified_only_blog_answers_if_modified_since(
    testbed: Testbed, client: aiohttp.ClientSession
) -> None:
    spec = _one(testbed, "blog-lastmod-only")
    status, headers, _ = await fetch(client, spec.url)
    assert status == 200
    assert "ETag" not in headers
    lastmod = headers["Last-Modified"]
    status, _, _ = await fetch(client, spec.url, headers={"If-Modified-Since": lastmod})
    assert status == 304
    earlier = email.utils.formatdate(
        email.utils.parsedate_to_datetime(lastmod).timestamp() - 1, usegmt=True
    )
    status, _, _ = await fetch(client, spec.url, headers={"If-Modified-Since": earlier})
    assert status == 200


async def test_feed_without_validators_never_answers_304(
    testbed: Testbed, client: aiohttp.ClientSession
) -> None:
    spec = _one(testbed, "blog-no-validators")
    status, headers, _ = await fetch(client, spec.url)
    assert status == 200
    assert "ETag" not in headers
    assert "Last-Modified" not in headers
    status, _, _ = await fetch(
        client, spec.url, headers={"If-None-Match": "*", "If-Modified-Since": headers["Date"]}
    )
    assert status == 200


async def test_letterbox_limit_is_shared_across_hostnames_and_domains(
    client: aiohttp.ClientSession,
) -> None:
    options = {**SMALL, "letterbox_rate": 0.0, "letterbox_burst": 5}
    async with running_testbed(seed=3, **options) as tb:
        specs = tb.catalog(behaviours=["letterbox", "letterbox-custom"])
        hosts = [s for s in specs if s.host.endswith(".letterbox.test")][:8]
        hosts += [s for s in specs if s.behaviour == "letterbox-custom"][:4]
        answers = [await fetch(client, s.url) for s in hosts]
        statuses = [a[0] for a in answers]
        assert statuses == [200] * 5 + [429] * 7
        assert all(a[1]["x-platform"] == "letterbox" for a in answers)
        retry_afters = [a[1]["Retry-After"] for a in answers[5:]]
        seconds = [r for r in retry_afters if r.isdigit()]
        dates = [r for r in retry_afters if not r.isdigit()]
        assert seconds
        assert dates
        assert all(int(r) == 60 for r in seconds)
        for d in dates:
            when = email.utils.parsedate_to_datetime(d)
            assert when.tzinfo is not None
            assert when.timestamp() > time.time()
        stats = await tb.stats()
        assert stats["platforms"]["letterbox"]["throttled"] == 7
        assert stats["platforms"]["letterbox"]["requests"] == 12
        # No hostname saw more than one request: a per-host cap would not have helped.
        assert max(h["requests"] for h in stats["hosts"].values()) == 1
        custom_domains = {s.host for s in hosts[8:]}
        assert all(stats["domains"][d]["throttled"] == 1 for d in custom_domains)
        # Other platforms are not limited by Letterbox's bucket.
        blog = tb.catalog(n=1, behaviours=["blog"])[0]
        assert (await fetch(client, blog.url))[0] == 200
        tb.reset_stats()  # also refills the bucket
        assert (await fetch(client, hosts[0].url))[0] == 200


async def test_letterbox_feed_is_a_newsletter_with_substack_like_tags(
    testbed: Testbed, client: aiohttp.ClientSession
) -> None:
    spec = _one(testbed, "letterbox-custom")
    status, headers, body = await fetch(client, spec.url)
    assert status == 200
    assert headers["x-platform"] == "letterbox"
    parsed = feedparser.parse(body)
    assert parsed.feed.generator == "Letterbox"
    assert b"<itunes:owner>" in body
    assert b"<itunes:author>" in body
    assert b"<itunes:type>" not in body
    assert b"audio/" not in body
    types = {e.enclosures[0].type for e in parsed.entries}
    assert types == {"image/jpeg"}
    assert spec.kind == "newsletter"
    assert spec.platform == "letterbox"


async def test_podcasts_declare_a_show_and_one_has_no_episodes_yet(
    testbed: Testbed, client: aiohttp.ClientSession
) -> None:
    _, _, body = await fetch(client, _one(testbed, "podcast").url)
    parsed = feedparser.parse(body)
    assert b"<itunes:type>episodic</itunes:type>" in body
    assert b'xmlns:podcast="https://podcastindex.org/namespace/1.0"' in body
    assert parsed.entries
    assert all(e.enclosures[0].type == "audio/mpeg" for e in parsed.entries)
    _, _, empty = await fetch(client, _one(testbed, "podcast-empty").url)
    assert b"<itunes:type>" in empty
    assert b"<podcast:guid>" in empty
    assert feedparser.parse(empty).entries == []


async def test_in_flight_is_counted_per_host_domain_and_total(
    testbed: Testbed, client: aiohttp.ClientSession
) -> None:
    shared = [s for s in testbed.catalog(behaviours=["blog*"]) if s.host.endswith(".blogs.test")]
    assert len(shared) >= 4
    gate = testbed.hold("*.blogs.test")
    tasks = [asyncio.create_task(fetch(client, s.url)) for s in shared[:4]]
    tasks.append(asyncio.create_task(fetch(client, shared[0].url)))
    await gate.wait_arrived(5)
    stats = await testbed.stats()
    assert stats["domains"]["blogs.test"]["in_flight"] == 5
    assert stats["hosts"][shared[0].host]["in_flight"] == 2
    assert stats["hosts"][shared[1].host]["in_flight"] == 1
    gate.open()
    assert [r[0] for r in await asyncio.gather(*tasks)] == [200] * 5
    stats = await testbed.stats()
    assert stats["domains"]["blogs.test"]["in_flight"] == 0
    assert stats["domains"]["blogs.test"]["max_in_flight"] == 5
    assert stats["hosts"][shared[0].host]["max_in_flight"] == 2
    assert stats["total"]["in_flight"] == 0
    # One after the other never overlaps.
    testbed.reset_stats()
    for s in shared[:3]:
        await fetch(client, s.url)
    stats = await testbed.stats()
    assert stats["domains"]["blogs.test"]["requests"] == 3
    assert stats["domains"]["blogs.test"]["max_in_flight"] == 1


async def test_advancing_the_clock_publishes_a_new_entry(
    testbed: Testbed, client: aiohttp.ClientSession
) -> None:
    spec = _one(testbed, "growing")
    assert spec.period == 600.0
    first = feedparser.parse((await fetch(client, spec.url))[2])
    again = feedparser.parse((await fetch(client, spec.url))[2])
    assert [e.id for e in again.entries] == [e.id for e in first.entries]
    control = testbed.url("control.test", "/_testbed/clock")
    async with client.post(control, json={"advance": spec.period}) as resp:
        assert resp.status == 200
        assert (await resp.json())["now"] == testbed.clock.start + spec.period
    later = feedparser.parse((await fetch(client, spec.url))[2])
    new = [e.id for e in later.entries if e.id not in {x.id for x in first.entries}]
    assert len(new) == 1
    assert later.entries[0].id == new[0]
    testbed.clock.advance(2 * spec.period)
    latest = feedparser.parse((await fetch(client, spec.url))[2])
    assert latest.entries[2].id == new[0]


async def test_same_seed_serves_the_same_bytes(client: aiohttp.ClientSession) -> None:
    async def bodies(seed: int) -> list[bytes]:
        async with running_testbed(seed=seed, **SMALL) as tb:
            specs = tb.catalog(n=12)
            out = []
            for s in specs:
                body = (await fetch(client, s.url))[2]
                out.append(body.replace(f":{tb.base_port}".encode(), b":PORT"))
            return out

    a, b, c = await bodies(5), await bodies(5), await bodies(6)
    assert a == b
    assert all(x != y for x, y in zip(a, c, strict=True))


async def test_gzip_bomb_is_small_on_the_wire_and_huge_inflated(
    client: aiohttp.ClientSession,
) -> None:
    size = 64 * (1 << 20)
    async with running_testbed(seed=1, **{**SMALL, "gzip_bomb_bytes": size}) as tb:
        status, headers, wire = await fetch(client, _one(tb, "gzip-bomb").url)
    assert status == 200
    assert headers["Content-Encoding"] == "gzip"
    assert len(wire) < size // 500
    inflater = zlib.decompressobj(31)
    total, view = 0, wire
    while view:
        total += len(inflater.decompress(view, 1 << 20))
        view = inflater.unconsumed_tail
    total += len(inflater.flush())
    assert total == size


async def test_huge_body_announces_and_sends_over_ten_megabytes(
    testbed: Testbed, client: aiohttp.ClientSession
) -> None:
    async with client.get(_one(testbed, "huge-body").url) as resp:
        assert resp.status == 200
        assert resp.content_length is not None
        assert resp.content_length > 10 * 1024 * 1024
        received = 0
        async for chunk in resp.content.iter_chunked(1 << 16):
            received += len(chunk)
    assert received == resp.content_length


@pytest.mark.parametrize(
    ("behaviour", "codes", "final"),
    [
        ("redirect-301", [301], "/feed-new"),
        ("redirect-308", [308], "/feed-new"),
        ("redirect-302", [302], "/feed-new"),
        ("redirect-307", [307], "/feed-new"),
        ("redirect-chain", [301, 302, 307], "/hop/3"),
    ],
)
async def test_redirects_lead_to_a_feed(
    testbed: Testbed, client: aiohttp.ClientSession, behaviour: str, codes: list[int], final: str
) -> None:
    spec = _one(testbed, behaviour)
    url, seen = spec.url, []
    for _ in range(5):
        status, headers, body = await fetch(client, url)
        if status not in (301, 302, 307, 308):
            break
        seen.append(status)
        url = headers["Location"]
    assert seen == codes
    assert status == 200
    assert url == spec.final_url == testbed.url(spec.host, final)
    assert feedparser.parse(body).entries


async def test_redirect_loop_and_long_chain(
    testbed: Testbed, client: aiohttp.ClientSession
) -> None:
    loop = _one(testbed, "redirect-loop")
    _, h1, _ = await fetch(client, loop.url)
    _, h2, _ = await fetch(client, h1["Location"])
    assert h2["Location"] == loop.url
    long = _one(testbed, "redirect-long")
    url, hops = long.url, 0
    while True:
        status, headers, _ = await fetch(client, url)
        if status == 200:
            break
        hops += 1
        url = headers["Location"]
    assert hops == 11
    with pytest.raises(aiohttp.TooManyRedirects):
        await fetch(client, long.url, allow_redirects=True, max_redirects=10)


async def test_new_feed_url_moves_a_podcast(
    testbed: Testbed, client: aiohttp.ClientSession
) -> None:
    spec = _one(testbed, "new-feed-url")
    _, _, body = await fetch(client, spec.url)
    tree = etree.fromstring(body)
    ns = {"itunes": "http://www.itunes.com/dtds/podcast-1.0.dtd"}
    assert tree.findtext("channel/itunes:new-feed-url", namespaces=ns) == spec.final_url
    assert spec.final_url is not None
    status, _, moved = await fetch(client, spec.final_url)
    assert status == 200
    assert b"<itunes:new-feed-url>" not in moved


@pytest.mark.parametrize(
    ("behaviour", "status", "retry_after"),
    [("status-404", 404, None), ("status-410", 410, None), ("status-500", 500, None),
     ("status-503", 503, None), ("status-503-retry", 503, "120"), ("blocked-403", 403, None)],
)
async def test_error_statuses(
    testbed: Testbed, client: aiohttp.ClientSession, behaviour: str, status: int,
    retry_after: str | None,
) -> None:
    got, headers, _ = await fetch(client, _one(testbed, behaviour).url)
    assert got == status
    assert headers.get("Retry-After") == retry_after
    assert (headers.get("cf-mitigated") == "challenge") == (behaviour == "blocked-403")


async def test_slow_drip_trickles_and_never_finishes(
    testbed: Testbed, client: aiohttp.ClientSession
) -> None:
    spec = _one(testbed, "slow-drip")
    tb_options = testbed.options
    assert tb_options.drip_interval > 0
    async with client.get(spec.url) as resp:
        assert resp.status == 200
        assert resp.content_length is None
        first = await resp.content.readany()
        assert first.startswith(b"<?xml")
        assert await resp.content.readexactly(2) == b"  "
        assert not resp.content.at_eof()


async def test_no_answer_accepts_and_stays_silent(
    testbed: Testbed, client: aiohttp.ClientSession
) -> None:
    spec = _one(testbed, "no-answer")
    gate = testbed.hold(spec.host)  # counts the arrival, then lets it into the silence
    task = asyncio.create_task(fetch(client, spec.url))
    await gate.wait_arrived(1)
    gate.open()
    done, _ = await asyncio.wait({task}, timeout=0.3)
    assert not done
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_broken_bodies(testbed: Testbed, client: aiohttp.ClientSession) -> None:
    _, _, malformed = await fetch(client, _one(testbed, "malformed").url)
    with pytest.raises(etree.XMLSyntaxError):
        etree.fromstring(malformed)
    recovered = etree.fromstring(malformed, etree.XMLParser(recover=True))
    assert len(recovered.findall(".//item")) == 3
    _, headers, mis = await fetch(client, _one(testbed, "mis-encoded").url)
    assert "utf-8" in headers["Content-Type"]
    with pytest.raises(UnicodeDecodeError):
        mis.decode("utf-8")
    _, _, bomb = await fetch(client, _one(testbed, "entity-bomb").url)
    assert b"<!ENTITY lol9" in bomb
    assert len(bomb) < 10_000
    hardened = etree.XMLParser(resolve_entities=False, no_network=True, recover=True)
    safe = etree.fromstring(bomb, hardened)
    assert len(safe.findall(".//item")) >= 3
    _, headers, html = await fetch(client, _one(testbed, "html-page").url)
    assert headers["Content-Type"].startswith("text/html")
    assert b"<html>" in html
    assert b"alternate" not in html
    disc = _one(testbed, "html-discovery")
    _, _, page = await fetch(client, disc.url)
    assert disc.final_url is not None
    assert disc.final_url.encode() in page


async def test_publisher_hints(testbed: Testbed, client: aiohttp.ClientSession) -> None:
    _, _, ttl = await fetch(client, _one(testbed, "hint-ttl").url)
    assert b"<ttl>120</ttl>" in ttl
    _, _, sy = await fetch(client, _one(testbed, "hint-sy").url)
    assert b"<sy:updatePeriod>hourly</sy:updatePeriod>" in sy
    _, headers, _ = await fetch(client, _one(testbed, "hint-max-age").url)
    assert headers["Cache-Control"] == "max-age=7200"
    assert {s.hint for s in testbed.catalog(behaviours=["hint-*"])} == {7200.0, 1800.0}


async def test_unknown_host_is_404_and_counted(
    testbed: Testbed, client: aiohttp.ClientSession
) -> None:
    status, _, _ = await fetch(client, testbed.url("nowhere.test", "/feed"))
    assert status == 404
    assert (await testbed.stats())["hosts"]["nowhere.test"]["statuses"] == {"404": 1}


async def test_head_request_has_headers_and_no_body(
    testbed: Testbed, client: aiohttp.ClientSession
) -> None:
    spec = _one(testbed, "blog")
    async with client.head(spec.url) as resp:
        assert resp.status == 200
        assert resp.headers["ETag"]
        assert await resp.read() == b""


@pytest.mark.parametrize(
    ("fmt", "version", "mime"),
    [("rss20", "rss20", "application/rss+xml"), ("atom10", "atom10", "application/atom+xml"),
     ("json11", "json11", "application/feed+json"), ("rss10", "rss10", "application/rdf+xml")],
)
async def test_blog_formats_parse(
    testbed: Testbed, client: aiohttp.ClientSession, fmt: str, version: str, mime: str
) -> None:
    spec = next(s for s in testbed.catalog(behaviours=["blog*"]) if s.format == fmt)
    status, headers, body = await fetch(client, spec.url)
    assert status == 200
    assert headers["Content-Type"].startswith(mime)
    if fmt == "json11":  # feedparser does not read JSON Feed
        doc = json.loads(body)
        assert doc["version"] == "https://jsonfeed.org/version/1.1"
        assert len(doc["items"]) == testbed.options.items
        assert doc["title"] == spec.title
        return
    parsed = feedparser.parse(body)
    assert parsed.version == version
    assert len(parsed.entries) == testbed.options.items
    assert parsed.feed.title == spec.title


async def test_robots_variants(testbed: Testbed, client: aiohttp.ClientSession) -> None:
    disallow = _one(testbed, "robots-disallow")
    _, _, robots = await fetch(client, testbed.url(disallow.host, "/robots.txt"))
    assert b"Disallow: /feed" in robots
    assert disallow.expect == "robots"
    assert (await fetch(client, disallow.url))[0] == 200  # served to those who ignore robots
    delay = _one(testbed, "robots-crawl-delay")
    _, _, robots = await fetch(client, testbed.url(delay.host, "/robots.txt"))
    assert b"Crawl-delay: 2" in robots
    _, _, robots = await fetch(client, testbed.url(_one(testbed, "blog").host, "/robots.txt"))
    assert b"Disallow" not in robots
