"""`fairfetch serve` as a process, and `run`'s parts (crawler + notifier + web) in one loop."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from fairfetch.config import Settings
from fairfetch.crawl import utcnow
from fairfetch.net.politeness import politeness_key
from fairfetch.store import hooks, open_store
from fairfetch.testing import running_testbed
from fairfetch.web.serve import run_all

from .conftest import TOKEN


def test_web_serve_command_serves_until_interrupted(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path}/cli.db"
    env = {k: v for k, v in os.environ.items() if not k.startswith("FAIRFETCH_")}
    env["COLUMNS"] = "200"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from fairfetch.cli import main; main()",
            "--db",
            db,
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        match = re.search(r"(http://127\.0\.0\.1:\d+)/", line)
        assert match, (line, proc.stderr.read() if proc.poll() is not None else "")
        r = httpx.get(match.group(1) + "/api/v1/feeds", timeout=10)
        assert r.status_code == 200
        assert r.json()["total"] == 0
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


async def test_web_run_crawls_and_serves_in_one_loop(tmp_path: Path) -> None:
    async with running_testbed(seed=2) as testbed:
        store = open_store(f"sqlite:///{tmp_path}/run.db")
        settings = testbed.settings(db=store.url, admin_token=TOKEN)
        spec = testbed.catalog(1, ["blog"])[0]
        feed, _ = store.add_feed(spec.url, now=utcnow(), politeness_key=politeness_key(spec.url))
        loop = asyncio.get_running_loop()
        crawled = asyncio.Event()

        def on_entries(_conn, feed_id, _ids, _now, _first, _settings) -> None:  # type: ignore[no-untyped-def]
            if feed_id == feed.id:
                loop.call_soon_threadsafe(crawled.set)

        hooks.register_new_entries_hook(on_entries)
        stop = asyncio.Event()
        started: asyncio.Future[str] = loop.create_future()
        task = asyncio.create_task(
            run_all(settings, store, stop, host="127.0.0.1", port=0, on_started=started.set_result)
        )
        try:
            url = await asyncio.wait_for(started, 30)
            await asyncio.wait_for(crawled.wait(), 60)  # the crawler part crawled the due feed
            async with httpx.AsyncClient(base_url=url) as client:
                shown = (await client.get(f"/api/v1/feeds/{feed.id}")).json()
                assert shown["status"] == "ok"
                assert shown["entry_count"] > 0
                page = await client.get(f"/feeds/{feed.id}")
                assert "status-ok" in page.text
                metrics = (await client.get("/metrics")).text
                # the running crawler's politeness slots are visible per key
                assert f'fairfetch_in_flight{{key="{feed.politeness_key}"}}' in metrics
                assert 'fairfetch_crawls_total{error_kind="",outcome="ok"} 1.0' in metrics
        finally:
            stop.set()
            await asyncio.wait_for(task, 60)  # every part returns once stop is set
            hooks.unregister_new_entries_hook(on_entries)
            store.close()
        assert task.exception() is None


async def test_web_run_shares_one_websub_service_with_its_upkeep(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under `run`, the push callback and the WebSub upkeep share one service (one delivery
    processor, the crawler's politeness), as docs/websub.md's Wiring says: the router built a
    second one at the first callback, so two processors worked one queue."""
    from fairfetch.websub import service as websub_service

    made: list[object] = []
    real_init = websub_service.WebSubService.__init__

    def counting_init(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        made.append(self)
        real_init(self, *args, **kwargs)

    monkeypatch.setattr(websub_service.WebSubService, "__init__", counting_init)
    store = open_store(f"sqlite:///{tmp_path}/run.db")
    settings = Settings(db=store.url, admin_token=TOKEN)
    stop = asyncio.Event()
    started: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    task = asyncio.create_task(
        run_all(settings, store, stop, host="127.0.0.1", port=0, on_started=started.set_result)
    )
    try:
        url = await asyncio.wait_for(started, 30)
        async with httpx.AsyncClient(base_url=url) as client:
            # A verification for a token we never gave: refused, through the service.
            r = await client.get("/websub/callback/unknown", params={"hub.mode": "subscribe"})
            assert r.status_code == 404
    finally:
        stop.set()
        await asyncio.wait_for(task, 60)
        store.close()
    assert len(made) == 1
