"""Conditional GET as RFC 9110 §13.2.2 orders it, on every validator variant: If-None-Match
decides when present (If-Modified-Since is then ignored), else If-Modified-Since. A testbed
more lenient than that would hide a crawler sending a stale or foreign tag."""

from __future__ import annotations

import aiohttp

from fairfetch.testing import Testbed

from .conftest import fetch


async def test_a_tag_to_a_feed_without_tags_is_no_match_even_with_a_matching_date(
    testbed: Testbed, client: aiohttp.ClientSession
) -> None:
    spec = testbed.catalog(n=1, behaviours=["blog-lastmod-only"])[0]
    status, headers, body = await fetch(client, spec.url)
    assert status == 200
    lastmod = headers["Last-Modified"]
    assert (await fetch(client, spec.url, headers={"If-Modified-Since": lastmod}))[0] == 304
    status, _, again = await fetch(
        client, spec.url, headers={"If-None-Match": '"from-another-url"',
                                   "If-Modified-Since": lastmod})
    assert (status, again) == (200, body)
    host = (await testbed.stats())["hosts"][spec.host]
    assert (host["conditional_requests"], host["conditional_hits"]) == (2, 1)
