"""Bad input to the control host: a 400 naming what was wrong, and the testbed still serving
the same web afterwards (a control request must never break the instrument)."""

from __future__ import annotations

import json

import aiohttp
import pytest

from fairfetch.testing import Testbed

from .conftest import fetch


@pytest.mark.parametrize(
    ("query", "body"),
    [("advance=nan", None), ("advance=inf", None), (None, {"set": "nan"}),
     (None, {"advance": "Infinity"})],
)
async def test_clock_refuses_a_time_that_is_not_a_number_and_feeds_still_answer(
    testbed: Testbed, client: aiohttp.ClientSession, query: str | None, body: dict | None
) -> None:
    blog = testbed.catalog(n=1, behaviours=["blog"])[0]
    before = await fetch(client, blog.url)
    url = testbed.url("control.test", "/_testbed/clock" + (f"?{query}" if query else ""))
    async with client.post(url, json=body) as resp:
        assert resp.status == 400
        assert "finite" in (await resp.json())["error"]
    assert testbed.clock.now() == testbed.clock.start
    status, _, _ = await fetch(client, testbed.url("control.test", "/_testbed/clock"))
    assert status == 200
    status, _, after = await fetch(client, blog.url)
    assert (status, after) == (200, before[2])


@pytest.mark.parametrize("n", ["abc", "-1", "1.5"])
async def test_catalogue_refuses_an_n_that_is_not_a_count(
    testbed: Testbed, client: aiohttp.ClientSession, n: str
) -> None:
    for name in ("catalog.json", "catalog.opml"):
        status, _, body = await fetch(
            client, testbed.url("control.test", f"/_testbed/{name}?n={n}")
        )
        assert status == 400, body
        assert f"n={n!r}".encode() in body


async def test_catalogue_with_n_zero_lists_nothing(
    testbed: Testbed, client: aiohttp.ClientSession
) -> None:
    status, _, body = await fetch(client, testbed.url("control.test", "/_testbed/catalog.json?n=0"))
    assert (status, json.loads(body)) == (200, [])
    assert testbed.catalog(n=0) == []
