"""Bad input to the control host: a 400 naming what was wrong, and the testbed still serving
the same web afterwards (a control request must never break the instrument)."""

from __future__ import annotations

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
