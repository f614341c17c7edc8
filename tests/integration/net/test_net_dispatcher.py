"""The async Dispatcher: concurrency per key and per host measured with a counting handler whose
calls are held on asyncio.Event gates (released one by one by the test, no sleeps)."""

from __future__ import annotations

import asyncio
from collections import Counter, deque
from dataclasses import dataclass, field

import pytest

from fairfetch.config import Settings
from fairfetch.net.outcome import FetchResult
from fairfetch.net.politeness import Dispatcher, DispatcherClosed, Feedback


@dataclass
class Gated:
    """A handler that counts what is in flight and holds each call until released."""

    key_of: dict[str, str]
    host_of: dict[str, str]
    in_key: Counter[str] = field(default_factory=Counter)
    in_host: Counter[str] = field(default_factory=Counter)
    max_key: Counter[str] = field(default_factory=Counter)
    max_host: Counter[str] = field(default_factory=Counter)
    total: int = 0
    max_total: int = 0
    waiting: deque[tuple[str, asyncio.Event, asyncio.Event]] = field(default_factory=deque)
    done: list[str] = field(default_factory=list)
    started: list[str] = field(default_factory=list)
    progressed: asyncio.Event = field(default_factory=asyncio.Event)

    async def __call__(self, item: str) -> Feedback:
        key, host = self.key_of[item], self.host_of[item]
        self.in_key[key] += 1
        self.in_host[host] += 1
        self.total += 1
        self.max_key[key] = max(self.max_key[key], self.in_key[key])
        self.max_host[host] = max(self.max_host[host], self.in_host[host])
        self.max_total = max(self.max_total, self.total)
        self.started.append(item)
        gate, finished = asyncio.Event(), asyncio.Event()
        self.waiting.append((item, gate, finished))
        self.progressed.set()
        await gate.wait()
        self.in_key[key] -= 1
        self.in_host[host] -= 1
        self.total -= 1
        self.done.append(item)
        finished.set()
        return Feedback()

    async def wait_started(self, n: int, run: asyncio.Task[None]) -> None:
        while len(self.started) < n:
            self.progressed.clear()
            await self._either(self.progressed.wait(), run)

    async def release_all(self, run: asyncio.Task[None]) -> None:
        """Release held calls oldest first, one at a time, until the dispatcher returns."""
        while not run.done():
            if self.waiting:
                _, gate, finished = self.waiting.popleft()
                gate.set()
                await finished.wait()
            else:
                self.progressed.clear()
                await self._either(self.progressed.wait(), run)
        await run

    @staticmethod
    async def _either(coro: object, run: asyncio.Task[None]) -> None:
        waiter = asyncio.ensure_future(coro)  # type: ignore[arg-type]
        await asyncio.wait({waiter, run}, return_when=asyncio.FIRST_COMPLETED)
        waiter.cancel()


def plan(
    spec: dict[str, dict[str, int]],
) -> tuple[list[tuple[str, str]], dict[str, str], dict[str, str]]:
    """{key: {host: n}} → items (url, id) plus each item's key and host."""
    items, key_of, host_of = [], {}, {}
    for key, hosts in spec.items():
        for host, n in hosts.items():
            for i in range(n):
                item = f"{host}#{i}"
                items.append((f"https://{host}/feed/{i}", item))
                key_of[item] = key
                host_of[item] = host
    return items, key_of, host_of


async def test_caps_per_key_and_per_host_hold_under_load() -> None:
    items, key_of, host_of = plan(
        {
            "alpha.test": {"a1.alpha.test": 4, "a2.alpha.test": 4, "a3.alpha.test": 4},
            "beta.test": {"b1.beta.test": 5, "b2.beta.test": 1},
            "solo.test": {"solo.test": 3},
        }
    )
    settings = Settings(per_key_in_flight=2, per_host_in_flight=1, global_in_flight=64)
    d: Dispatcher[str] = Dispatcher(settings)
    handler = Gated(key_of, host_of)
    for url, item in items:
        await d.put(url, item)
    d.close()
    run = asyncio.create_task(d.run(handler))
    # first wave: every key up to its cap at once (solo has one host: one at a time)
    await handler.wait_started(5, run)
    assert dict(handler.in_key) == {"alpha.test": 2, "beta.test": 2, "solo.test": 1}
    await handler.release_all(run)
    assert sorted(handler.done) == sorted(item for _, item in items)  # each exactly once
    assert handler.max_key == {"alpha.test": 2, "beta.test": 2, "solo.test": 1}
    assert set(handler.max_host.values()) == {1}
    snap = d.snapshot()
    assert all(s.queued == 0 and s.in_flight == 0 for s in snap.values())


async def test_global_cap_and_key_overrides() -> None:
    items, key_of, host_of = plan(
        {f"k{i}.test": {f"h{j}.k{i}.test": 2 for j in range(3)} for i in range(4)}
    )
    settings = Settings(
        per_key_in_flight=3,
        global_in_flight=5,
        key_overrides={"k0.test": {"in_flight": 1}},
    )
    d: Dispatcher[str] = Dispatcher(settings)
    handler = Gated(key_of, host_of)
    for url, item in items:
        await d.put(url, item)
    d.close()
    run = asyncio.create_task(d.run(handler))
    await handler.wait_started(5, run)
    assert handler.total == 5
    await handler.release_all(run)
    assert handler.max_total == 5
    assert handler.max_key["k0.test"] == 1
    assert max(handler.max_key.values()) <= 3  # fairness spreads the 5 slots over 4 keys
    assert len(handler.done) == len(items)


async def test_retry_after_pauses_key_until_the_clock_passes() -> None:
    now = [0.0]
    d: Dispatcher[str] = Dispatcher(Settings(per_key_in_flight=1), clock=lambda: now[0])
    started_at: dict[str, float] = {}
    throttled = asyncio.Event()
    second_started = asyncio.Event()

    async def handler(item: str) -> Feedback:
        started_at[item] = now[0]
        if item == "first":
            throttled.set()
            return Feedback(throttled=True, retry_after=1000.0)
        second_started.set()
        return Feedback()

    await d.put("https://a.pause.test/1", "first")
    await d.put("https://b.pause.test/2", "second")  # same key, other host: only the pause holds it
    d.close()
    run = asyncio.create_task(d.run(handler))
    await throttled.wait()
    now[0] = 1000.0
    d.wake()
    await second_started.wait()
    await run
    assert started_at == {"first": 0.0, "second": 1000.0}
    stats = d.snapshot()["pause.test"]
    assert stats.throttles == 1
    assert stats.rate == 1.5  # cut to throttle_rate (1/s), one success added 0.5 back
    assert stats.paused_until == 1000.0


async def test_put_waits_when_full_and_after_close_is_refused() -> None:
    d: Dispatcher[int] = Dispatcher(Settings(), max_pending=2)
    await d.put("https://a.test/1", 1)
    await d.put("https://a.test/2", 2)
    blocked = asyncio.create_task(d.put("https://a.test/3", 3))
    await asyncio.sleep(0)  # one scheduling step: the put runs until it blocks
    assert not blocked.done()
    seen: list[int] = []

    async def handler(item: int) -> Feedback:
        seen.append(item)
        return Feedback()

    run = asyncio.create_task(d.run(handler))
    await blocked
    d.close()
    await run
    assert seen == [1, 2, 3]
    with pytest.raises(DispatcherClosed):
        await d.put("https://a.test/4", 4)


async def test_handler_exception_is_loud() -> None:
    d: Dispatcher[int] = Dispatcher(Settings(per_key_in_flight=1))
    for i in range(5):
        await d.put(f"https://h{i}.same.test/", i)
    d.close()
    seen: list[int] = []

    async def handler(item: int) -> Feedback:
        seen.append(item)
        if item == 1:
            raise RuntimeError("bug in the handler")
        return Feedback()

    with pytest.raises(RuntimeError, match="bug in the handler"):
        await d.run(handler)
    assert seen == [0, 1]  # nothing started after the failure


async def test_run_returns_at_once_when_closed_and_empty() -> None:
    d: Dispatcher[int] = Dispatcher(Settings())
    d.close()

    async def handler(item: int) -> Feedback:
        raise AssertionError("never called")

    await d.run(handler)


def test_feedback_from_result() -> None:
    throttled = FetchResult(url="u", final_url="u", status=429, retry_after=120.0)
    assert Feedback.from_result(throttled) == Feedback(throttled=True, retry_after=120.0)
    dns = FetchResult(url="u", final_url="u", error_kind="dns")
    assert Feedback.from_result(dns) == Feedback(network_error=True)
    gone = FetchResult(url="u", final_url="u", status=410, error_kind="gone")
    assert Feedback.from_result(gone) == Feedback()
