"""Browser tests: the directory served by uvicorn on loopback, driven by Debian's Chromium."""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from fairfetch.config import Settings
from fairfetch.store import SqlStore, open_store

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
TOKEN = "e2e-admin-token"
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "web"


def _need_chromium() -> None:
    if shutil.which(CHROMIUM) is None and not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} is missing: `make browser` installs it")
        pytest.skip(f"{CHROMIUM} is missing (run scripts/install-chromium)")


@dataclass
class Site:
    """A running directory: base URL, the store behind it, the crawler it uses."""

    url: str
    store: SqlStore
    settings: Settings
    crawler: Any


@pytest.fixture
async def browser() -> AsyncIterator[Any]:
    _need_chromium()
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        b = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield b
        finally:
            await b.close()


async def start_site(settings: Settings, store: SqlStore, crawler: Any) -> tuple[str, Any]:
    """Serve the app in this event loop on a free loopback port; returns (url, stopper)."""
    from fairfetch.web.serve import serve

    stop = asyncio.Event()
    started: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    task = asyncio.create_task(
        serve(
            settings, store, crawler, stop, host="127.0.0.1", port=0, on_started=started.set_result
        )
    )
    url = await asyncio.wait_for(started, 30)

    async def stopper() -> None:
        stop.set()
        await task

    return url, stopper


def shot_path(name: str) -> str:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return str(ARTIFACTS / f"{name}.png")


def open_tmp_store(tmp_path: Path) -> SqlStore:
    return open_store(f"sqlite:///{tmp_path}/e2e.db")
