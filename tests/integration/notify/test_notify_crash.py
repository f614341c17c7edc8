"""SIGKILL the notifier (the real ``fairfetch notify send-due`` subprocess) at random points over
20 runs against an aiosmtpd sink in this process, then let it finish: every notification is
delivered; a notification arrives twice only when the notifier died with it in flight, and then
with the same Message-ID."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from .conftest import Received, _world

FAIRFETCH = str(Path(sys.executable).with_name("fairfetch"))
RUNS = 20


@pytest.mark.slow
def test_notify_sigkill_at_random_points_loses_nothing(tmp_path, smtp_server):
    db = f"sqlite:///{tmp_path}/crash.db"
    w = _world(db, smtp_server.url)
    # the world happened three days ago, so every digest issue is due by now
    past = datetime.now(UTC) - timedelta(days=3)
    feeds = [w.add_feed(f"https://f{i}.example.test/feed", at=past) for i in range(3)]
    for r in range(4):
        for fid in feeds:
            w.subscribe(f"rt{r}@example.test", fid, at=past)
    for r in range(2):
        for fid in feeds:
            # an issue hour far from the writes' minutes: each digest reader gets one issue
            w.subscribe(f"dg{r}@example.test", fid, at=past, mode="daily",
                        hour=(past.hour + 12) % 24)
    for i in range(7):
        for fid in feeds:
            w.write(fid, [w.entry(f"feed {fid} item {i}")], at=past + timedelta(minutes=i))
    expected = {r["id"] for r in w.outbox() if r["kind"] in ("item", "digest")}
    assert len(expected) == 4 * 3 * 7 + 2

    rng = random.Random(20261130)
    handler = smtp_server.handler
    received: list[Received] = []
    cond = threading.Condition()
    state: dict = {"pid": None, "mode": None, "k": 0, "seen": 0}
    in_flight: set[str] = set()
    kills = 0

    def on_data(got: Received) -> None:
        with cond:
            received.append(got)
            state["seen"] += 1
            if state["mode"] == "in_flight" and state["seen"] == state["k"]:
                in_flight.add(got.msg["Message-ID"])
                os.kill(state["pid"], signal.SIGKILL)  # dies before our 250 reaches it
                state["mode"] = "killed"
            cond.notify_all()

    handler.on_data = on_data
    env = {
        **os.environ,
        "FAIRFETCH_SMTP_URL": smtp_server.url,
        "FAIRFETCH_PUBLIC_URL": "https://news.example.test",
        "FAIRFETCH_MAIL_FROM": "fairfetch <mail@news.example.test>",
        "FAIRFETCH_NOTIFY_RATE": "0",
    }

    def start() -> subprocess.Popen:
        return subprocess.Popen(
            [FAIRFETCH, "--db", db, "notify", "send-due"],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )

    for _ in range(RUNS):
        mode = rng.choice(["in_flight", "after_ack", "after_ack", "at_start"])
        proc = start()
        with cond:
            state.update(pid=proc.pid, mode=mode, k=rng.randint(1, 6), seen=0)
        if mode == "after_ack":
            # kill -9 from outside once k messages arrived: wherever the notifier is then
            def exited(p: subprocess.Popen = proc) -> None:
                p.wait()
                with cond:
                    cond.notify_all()

            watcher = threading.Thread(target=exited, daemon=True)
            watcher.start()
            with cond:
                cond.wait_for(
                    lambda p=proc: state["seen"] >= state["k"] or p.poll() is not None,
                    timeout=60,
                )
                if proc.poll() is None:
                    os.kill(proc.pid, signal.SIGKILL)
                    # the message just received may not be marked sent yet
                    in_flight.update(r.msg["Message-ID"] for r in received[-2:])
        elif mode == "at_start":
            os.kill(proc.pid, signal.SIGKILL)  # before or during start-up/migration/first query
        proc.wait(timeout=120)
        if proc.returncode == -signal.SIGKILL:
            kills += 1
        with cond:
            state["mode"] = None
    assert kills >= RUNS // 2, "the notifier must actually have been killed"

    # no more kills: run until the outbox is empty
    for _ in range(5):
        proc = start()
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode()
        if not [r for r in w.outbox() if r["status"] == "pending"]:
            break
    rows = {r["id"]: r for r in w.outbox()}
    assert {i for i in expected if rows[i]["status"] == "sent"} == expected

    copies: dict[tuple[str, str], list[str]] = defaultdict(list)
    for got in received:
        copies[(got.rcpt, str(got.msg["Subject"]))].append(str(got.msg["Message-ID"]))
    # every notification delivered (counted by the test, on what the server received)
    assert len(copies) == len(expected)
    duplicates = {k: ids for k, ids in copies.items() if len(ids) > 1}
    extra = sum(len(ids) - 1 for ids in duplicates.values())
    # duplicates only for messages in flight at a kill, each with one and the same Message-ID
    assert extra <= kills
    for ids in duplicates.values():
        assert len(set(ids)) == 1
        assert ids[0] in in_flight
    print(f"\n{RUNS} runs, {kills} kills, {len(received)} received, {extra} duplicates in flight")
    w.store.close()
