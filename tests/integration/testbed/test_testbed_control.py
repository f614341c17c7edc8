"""The control host, the catalogue, extension families, and the threaded runner."""

from __future__ import annotations

import http.client
import json

import aiohttp
from aiohttp import web
from lxml import etree

from fairfetch.config import Settings
from fairfetch.testbed import CONTEXT, registry
from fairfetch.testing import Testbed, running_testbed, testbed_thread

from .conftest import SMALL, fetch


async def test_stats_reset_and_clock_over_http(
    testbed: Testbed, client: aiohttp.ClientSession
) -> None:
    blog = testbed.catalog(n=1, behaviours=["blog"])[0]
    await fetch(client, blog.url)
    status, _, body = await fetch(client, testbed.url("control.test", "/_testbed/stats"))
    stats = json.loads(body)
    assert status == 200
    assert stats["hosts"][blog.host]["requests"] == 1
    assert stats["total"]["requests"] == 1  # control requests are not counted
    assert stats["clock"] == testbed.clock.now()
    status, _, _ = await fetch(client, testbed.url("control.test", "/_testbed/reset"))
    assert status == 405  # a GET must not wipe what a test is about to assert
    async with client.post(testbed.url("control.test", "/_testbed/reset")) as resp:
        assert resp.status == 200
    assert (await testbed.stats())["hosts"] == {}
    async with client.post(testbed.url("control.test", "/_testbed/clock?advance=90")) as resp:
        assert (await resp.json())["now"] == testbed.clock.start + 90
    async with client.post(testbed.url("control.test", "/_testbed/clock?advance=-5")) as resp:
        assert resp.status == 400
    assert testbed.clock.now() == testbed.clock.start + 90


async def test_catalogue_and_opml(testbed: Testbed, client: aiohttp.ClientSession) -> None:
    specs = testbed.catalog()
    assert len({s.url for s in specs}) == len(specs)
    assert all(s.url.startswith(f"http://{s.host}:{testbed.base_port}/") for s in specs)
    # Healthy families come first and interleaved, so a prefix is a realistic mix.
    assert {s.kind for s in specs[:8]} == {"blog", "newsletter", "podcast"}
    status, headers, body = await fetch(
        client, testbed.url("control.test", "/_testbed/catalog.opml")
    )
    assert status == 200
    assert "opml" in headers["Content-Type"]
    outlines = etree.fromstring(body).findall(".//outline")
    assert [o.get("xmlUrl") for o in outlines] == [s.url for s in specs]
    _, _, some = await fetch(
        client, testbed.url("control.test", "/_testbed/catalog.json?n=3&behaviours=status-*")
    )
    assert [s["behaviour"] for s in json.loads(some)] == ["status-404", "status-410", "status-500"]


async def test_default_catalogue_has_thousands_of_feeds() -> None:
    async with running_testbed(seed=1) as tb:
        specs = tb.catalog()
        assert len(specs) >= 2500
        assert len(tb.catalog(n=1000)) == 1000


def test_settings_reach_the_testbed_and_only_it() -> None:
    tb = Testbed(1, blogs=1)
    settings = tb.settings(per_key_in_flight=1)
    assert isinstance(settings, Settings)
    assert settings.allow_networks == ("127.0.0.1/32",)
    assert settings.resolve == ("*.test:127.0.0.1",)
    assert settings.per_key_in_flight == 1


class EchoFamily:
    name = "test-echo"
    platform = "echo-platform"

    def matches(self, host: str) -> bool:
        return host.endswith(".echo.test")

    async def handle(self, request: web.Request, host: str) -> web.StreamResponse:
        tb = request.app[CONTEXT]
        return web.json_response({"host": host, "seed": tb.seed, "now": tb.clock.now()})

    def catalog(self, tb: Testbed) -> list:
        from fairfetch.testbed import FeedSpec

        return [FeedSpec(url=tb.url("a.echo.test", "/"), behaviour="echo", kind=None,
                         host="a.echo.test")]


async def test_registered_family_serves_its_hosts_and_is_counted(
    client: aiohttp.ClientSession,
) -> None:
    registry.register(EchoFamily())
    try:
        async with running_testbed(seed=9, **SMALL) as tb:
            status, _, body = await fetch(client, tb.url("a.echo.test", "/x"))
            assert status == 200
            assert json.loads(body) == {"host": "a.echo.test", "seed": 9, "now": tb.clock.now()}
            # Built-in hosts still win over families.
            blog = tb.catalog(n=1, behaviours=["blog"])[0]
            assert (await fetch(client, blog.url))[0] == 200
            stats = await tb.stats()
            assert stats["platforms"]["echo-platform"]["requests"] == 1
            assert tb.catalog(behaviours=["echo"])[0].host == "a.echo.test"
    finally:
        registry.unregister("test-echo")
    async with running_testbed(seed=9, **SMALL) as tb:
        assert (await fetch(client, tb.url("a.echo.test", "/x")))[0] == 404


def test_testbed_thread_serves_sync_callers() -> None:
    with testbed_thread(seed=2, **SMALL) as tb:
        spec = tb.catalog(n=1, behaviours=["growing"])[0]
        conn = http.client.HTTPConnection("127.0.0.1", tb.base_port, timeout=10)
        try:
            conn.request("GET", "/feed.xml", headers={"Host": f"{spec.host}:{tb.base_port}"})
            resp = conn.getresponse()
            first = resp.read()
            assert resp.status == 200
            tb.clock.advance(spec.period or 0)
            conn.request("GET", "/feed.xml", headers={"Host": spec.host})
            second = conn.getresponse().read()
        finally:
            conn.close()
        assert first != second
        assert tb.snapshot()["hosts"][spec.host]["requests"] == 2


def test_gate_works_across_threads() -> None:
    import threading

    with testbed_thread(seed=2, **SMALL) as tb:
        spec = tb.catalog(n=1, behaviours=["blog"])[0]
        gate = tb.hold(spec.host)
        results: list[int] = []

        def get() -> None:
            conn = http.client.HTTPConnection("127.0.0.1", tb.base_port, timeout=10)
            path = spec.url.split(str(tb.base_port), 1)[1]
            conn.request("GET", path, headers={"Host": spec.host})
            results.append(conn.getresponse().status)
            conn.close()

        workers = [threading.Thread(target=get) for _ in range(2)]
        for w in workers:
            w.start()
        gate.wait_arrived_blocking(2, timeout=10)
        assert tb.snapshot()["hosts"][spec.host]["in_flight"] == 2
        assert results == []
        gate.open()
        for w in workers:
            w.join()
        assert results == [200, 200]
