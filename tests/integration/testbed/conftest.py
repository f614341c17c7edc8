"""Fixtures for talking to the testbed over real HTTP on loopback.

The client resolves every ``*.test`` name to 127.0.0.1 and refuses any other name, so a test can
use the testbed's real URLs and can never reach anything but loopback.
"""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from aiohttp.abc import AbstractResolver, ResolveResult

from fairfetch.testing import Testbed, running_testbed

#: A small web keeps start-up and catalogue walks quick; behaviours do not depend on the size.
SMALL = {"blogs": 40, "letterbox": 30, "letterbox_custom": 5, "podcasts": 5, "growing": 3,
         "edge_copies": 1, "start": 1_767_225_600.0, "drip_interval": 0.05}


class TestResolver(AbstractResolver):
    __test__ = False

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        if not host.endswith(".test"):
            raise OSError(f"test resolver refuses {host!r}: only *.test (loopback) is reachable")
        return [ResolveResult(hostname=host, host="127.0.0.1", port=port,
                              family=socket.AF_INET, proto=0, flags=socket.AI_NUMERICHOST)]

    async def close(self) -> None:
        return None


@pytest.fixture
async def testbed() -> AsyncIterator[Testbed]:
    async with running_testbed(seed=1, **SMALL) as tb:
        yield tb


@pytest.fixture
async def client() -> AsyncIterator[aiohttp.ClientSession]:
    connector = aiohttp.TCPConnector(resolver=TestResolver(), limit=100, force_close=True)
    async with aiohttp.ClientSession(connector=connector, auto_decompress=False) as session:
        yield session


async def fetch(
    session: aiohttp.ClientSession, url: str, **kwargs: Any
) -> tuple[int, Any, bytes]:
    """(status, headers, body) of one GET that does not follow redirects."""
    kwargs.setdefault("allow_redirects", False)
    async with session.get(url, **kwargs) as resp:
        return resp.status, resp.headers, await resp.read()
