"""The pure dispatch state machine with a fake clock: caps, gaps, AIMD, pauses, fairness, and
the invariant "a key is in the round iff its queue is non-empty" — unit tests plus a hypothesis
stateful test."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections import Counter, deque
from typing import Any

import pytest
from hypothesis import settings as hyp_settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from fairfetch.config import Settings
from fairfetch.errors import ConfigError
from fairfetch.net.politeness import Feedback, InvariantError, PolitenessState, Slot

OK = Feedback()
THROTTLED = Feedback(throttled=True)


def drain(state: PolitenessState[Any], now: float) -> list[Slot[Any]]:
    out = []
    while (slot := state.pop_ready(now)) is not None:
        out.append(slot)
    return out


def test_per_key_cap() -> None:
    s: PolitenessState[int] = PolitenessState(per_key_in_flight=2)
    for i in range(5):
        s.push("k", f"h{i}.k.test", i)
    started = drain(s, 0.0)
    assert [x.item for x in started] == [0, 1]
    assert s.pop_ready(0.0) is None
    s.finish(started[0], OK, 0.0)
    assert [x.item for x in drain(s, 0.0)] == [2]
    s.check_invariants()


def test_one_request_per_host() -> None:
    s: PolitenessState[int] = PolitenessState(per_key_in_flight=4)
    for i in range(3):
        s.push("k", "same.k.test", i)
    s.push("k", "other.k.test", 99)
    started = drain(s, 0.0)
    assert sorted(x.item for x in started) == [0, 99]
    s.finish(next(x for x in started if x.item == 0), OK, 0.0)
    assert [x.item for x in drain(s, 0.0)] == [1]  # FIFO within a host


def test_global_cap() -> None:
    s: PolitenessState[str] = PolitenessState(global_in_flight=3)
    for k in "abcde":
        s.push(k, f"{k}.test", k)
    started = drain(s, 0.0)
    assert len(started) == 3
    s.finish(started[0], OK, 0.0)
    assert len(drain(s, 0.0)) == 1


def test_gap_between_starts() -> None:
    s: PolitenessState[int] = PolitenessState(per_key_in_flight=5, per_key_gap=5.0)
    for i in range(3):
        s.push("k", f"h{i}.test", i)
    assert [x.item for x in drain(s, 100.0)] == [0]
    assert s.next_wake(100.0) == 105.0
    assert s.pop_ready(104.999) is None
    assert [x.item for x in drain(s, 105.0)] == [1]
    assert s.next_wake(105.0) == 110.0


def test_crawl_delay_gap_and_overrides() -> None:
    s: PolitenessState[int] = PolitenessState(
        per_key_in_flight=2,
        overrides={"slow.test": {"in_flight": 1, "gap": 10.0}},
    )
    assert s.cap("slow.test") == 1
    assert s.gap("slow.test") == 10.0
    assert s.cap("fast.test") == 2
    assert s.gap("fast.test") == 0.0
    s.set_gap("fast.test", 3.0)  # robots.txt crawl-delay
    assert s.gap("fast.test") == 3.0
    s.set_gap("slow.test", 3.0)  # never shortens a configured gap
    assert s.gap("slow.test") == 10.0


def test_overrides_from_settings() -> None:
    settings = Settings(key_overrides={"backend:substack": {"in_flight": 1, "gap": 2.0}})
    s: PolitenessState[int] = PolitenessState.from_settings(settings)
    assert (s.cap("backend:substack"), s.gap("backend:substack")) == (1, 2.0)


@pytest.mark.parametrize(
    "bad",
    [
        {"k": {"in_flight": 0}},
        {"k": {"gap": -1}},
        {"k": {"speed": 3}},
        {"k": {"in_flight": "many"}},
        {"k": 3},
        # TOML has inf and nan: an infinite gap overflowed the crawler's rescheduling, a NaN
        # one was no gap at all, and int(inf) escaped as an OverflowError traceback.
        {"k": {"gap": float("inf")}},
        {"k": {"gap": float("nan")}},
        {"k": {"in_flight": float("inf")}},
    ],
)
def test_bad_overrides_are_config_errors_naming_the_key(bad: dict[str, Any]) -> None:
    with pytest.raises(ConfigError, match="key_overrides\\['k'\\]"):
        PolitenessState(overrides=bad)


def test_aimd_halves_on_throttle_and_recovers_additively() -> None:
    s: PolitenessState[int] = PolitenessState(
        per_key_in_flight=4, throttle_rate=1.0, recovery=0.5, max_rate=5.0
    )
    for i in range(400):
        s.push("k", f"h{i}.test", i)
    first = drain(s, 0.0)
    assert len(first) == 4
    assert s.snapshot()["k"].rate is None  # unlimited until throttled
    assert s.gap("k") == 0.0
    # Two requests of the same round throttled: one cut, not two (TCP-style). The first cut
    # goes to half the observed pace (instant here), at most throttle_rate.
    s.finish(first[0], THROTTLED, 1.0)
    s.finish(first[1], THROTTLED, 1.0)
    assert s.snapshot()["k"].rate == 1.0
    assert s.snapshot()["k"].throttles == 2
    assert s.gap("k") == 1.0  # one start per second
    assert s.cap("k") == 4  # the rate, not the in-flight cap, is what comes down
    # Additive increase: each success adds recovery / rate (≈ +0.5 starts/s per second).
    s.finish(first[2], OK, 1.0)
    assert s.snapshot()["k"].rate == 1.5
    s.finish(first[3], OK, 1.0)
    assert s.snapshot()["k"].rate == pytest.approx(1.5 + 0.5 / 1.5)
    # A request started after the cut and throttled halves again.
    t = 10.0
    later = s.pop_ready(t)
    assert later is not None
    s.finish(later, THROTTLED, t)
    assert s.snapshot()["k"].rate == pytest.approx((1.5 + 0.5 / 1.5) / 2)
    assert s.gap("k") == pytest.approx(2 / (1.5 + 0.5 / 1.5))
    # Network errors neither cut nor recover.
    rate = s.snapshot()["k"].rate
    t += 10.0
    slot = s.pop_ready(t)
    assert slot is not None
    s.finish(slot, Feedback(network_error=True), t)
    assert s.snapshot()["k"].rate == rate
    # Recovery goes on until the key is unlimited again, gap back to zero.
    for _ in range(300):
        t += 10.0
        slot = s.pop_ready(t)
        assert slot is not None
        s.finish(slot, OK, t)
        if s.snapshot()["k"].rate is None:
            break
    assert s.snapshot()["k"].rate is None
    assert s.gap("k") == 0.0


def test_first_cut_halves_the_observed_pace() -> None:
    s: PolitenessState[int] = PolitenessState(throttle_rate=1.0)
    for i in range(10):
        s.push("k", "h.test", i)
    t = 0.0
    for _ in range(4):  # one start every 4 s: 0.25 starts/s
        slot = s.pop_ready(t)
        assert slot is not None
        s.finish(slot, OK, t)
        t += 4.0
    slot = s.pop_ready(t)
    assert slot is not None
    s.finish(slot, THROTTLED, t)
    assert s.snapshot()["k"].rate == pytest.approx(0.125)
    assert s.gap("k") == pytest.approx(8.0)


def test_rate_has_a_floor() -> None:
    s: PolitenessState[int] = PolitenessState(min_rate=1 / 8)
    for i in range(10):
        s.push("k", "h.test", i)
    t = 0.0
    for _ in range(6):
        slot = s.pop_ready(t)
        assert slot is not None
        s.finish(slot, THROTTLED, t)
        t += 1000.0
    assert s.snapshot()["k"].rate == 1 / 8


def test_drop_takes_a_keys_queue_back() -> None:
    s: PolitenessState[int] = PolitenessState()
    for i in range(3):
        s.push("k", f"h{i % 2}.test", i)
    s.push("other", "o.test", 9)
    assert sorted(s.drop("k")) == [0, 1, 2]
    assert s.round() == ["other"]
    assert s.pending == 1
    assert s.drop("k") == []
    s.check_invariants()


def test_retry_after_pauses_the_whole_key_not_others() -> None:
    s: PolitenessState[str] = PolitenessState(per_key_in_flight=2)
    for i in range(3):
        s.push("k", f"h{i}.k.test", f"k{i}")
    s.push("other", "other.test", "o0")
    s.push("other", "other.test", "o1")
    started = drain(s, 0.0)
    assert sorted(x.item for x in started) == ["k0", "k1", "o0"]
    k0 = next(x for x in started if x.item == "k0")
    s.finish(k0, Feedback(throttled=True, retry_after=30.0), 10.0)
    assert s.snapshot()["k"].paused_until == 40.0
    o0 = next(x for x in started if x.item == "o0")
    s.finish(o0, OK, 11.0)
    assert [x.item for x in drain(s, 11.0)] == ["o1"]  # the other key is not paused
    assert s.next_wake(11.0) == 40.0
    assert s.pop_ready(39.9) is None  # k2 waits although k has a free slot
    k1 = next(x for x in started if x.item == "k1")
    s.finish(k1, OK, 20.0)
    assert s.pop_ready(39.9) is None
    assert [x.item for x in drain(s, 40.0)] == ["k2"]


def test_round_robin_a_huge_key_does_not_starve_the_others() -> None:
    s: PolitenessState[str] = PolitenessState(per_key_in_flight=1)
    for i in range(100):
        s.push("huge", f"h{i}.huge.test", f"huge{i}")
    for k in ("b", "c"):
        for i in range(2):
            s.push(k, f"h{i}.{k}.test", f"{k}{i}")
    order = []
    while (slot := s.pop_ready(0.0)) is not None:
        order.append(slot.key)
        s.finish(slot, OK, 0.0)
    assert order[:6] == ["huge", "b", "c", "huge", "b", "c"]
    assert set(order[6:]) == {"huge"}


def test_a_slow_key_does_not_block_the_others() -> None:
    s: PolitenessState[str] = PolitenessState(per_key_in_flight=2, global_in_flight=10)
    for i in range(10):
        s.push("slow", f"h{i}.slow.test", f"s{i}")
    first = drain(s, 0.0)  # slow's two slots taken and never finished
    assert len(first) == 2
    for i in range(5):
        s.push("fast", f"h{i}.fast.test", f"f{i}")
    done = []
    while (slot := s.pop_ready(0.0)) is not None:
        done.append(slot.item)
        s.finish(slot, OK, 0.0)
    assert done == [f"f{i}" for i in range(5)]
    assert s.snapshot()["slow"].queued == 8


def test_key_leaves_the_round_when_empty_and_rejoins_when_refilled() -> None:
    s: PolitenessState[int] = PolitenessState()
    s.push("a", "a.test", 1)
    s.push("b", "b.test", 2)
    assert s.round() == ["a", "b"]
    slot = s.pop_ready(0.0)
    assert slot is not None
    assert slot.key == "a"
    assert s.round() == ["b"]  # a's queue is empty: a is out of the round
    s.push("a", "a.test", 3)  # refilled at a later moment
    assert s.round() == ["b", "a"]
    s.check_invariants()


def test_invariant_is_checked_in_code() -> None:
    s: PolitenessState[int] = PolitenessState()
    s.push("a", "a.test", 1)
    s.push("a", "a.test", 2)
    slot = s.pop_ready(0.0)
    assert slot is not None
    s._round.clear()  # corrupt: a still has work but is not in the round
    with pytest.raises(InvariantError):
        s.check_invariants()
    with pytest.raises(InvariantError, match="round"):
        s.finish(slot, OK, 0.0)  # the next operation on the key notices


def test_invariant_check_survives_python_O(tmp_path: Any) -> None:
    # `assert` vanishes under -O; the invariant check must not.
    code = textwrap.dedent(
        """
        from fairfetch.net.politeness import Feedback, InvariantError, PolitenessState
        s = PolitenessState()
        s.push("a", "a.test", 1)
        s.push("a", "a.test", 2)
        slot = s.pop_ready(0.0)
        s._round.clear()
        try:
            s.finish(slot, Feedback(), 0.0)
        except InvariantError:
            print("raised")
        """
    )
    out = subprocess.run(
        [sys.executable, "-O", "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "raised"


def test_finish_of_unknown_slot_is_an_invariant_error() -> None:
    s: PolitenessState[int] = PolitenessState()
    with pytest.raises(InvariantError):
        s.finish(Slot("k", "h.test", 1, 0.0), OK, 0.0)


# --- stateful property test ------------------------------------------------------------------

KEYS = ["a", "b", "c"]
HOSTS = ["h1", "h2"]


class DispatchMachine(RuleBasedStateMachine):
    """Random pushes (the same key refilled at separate moments), starts, finishes with every
    kind of feedback, and clock moves. After every step: the invariants hold, counts match a
    model, no start ever broke a cap, per-host order is FIFO, nothing is lost or duplicated."""

    @initialize(
        cap=st.integers(1, 3),
        per_host=st.integers(1, 2),
        global_cap=st.integers(1, 5),
        gap=st.sampled_from([0.0, 0.5, 2.0]),
    )
    def setup(self, cap: int, per_host: int, global_cap: int, gap: float) -> None:
        self.state: PolitenessState[int] = PolitenessState(
            per_key_in_flight=cap,
            per_key_gap=gap,
            per_host_in_flight=per_host,
            global_in_flight=global_cap,
            overrides={"c": {"in_flight": 1, "gap": 1.0}},
        )
        self.now = 0.0
        self.next_item = 0
        self.queued: dict[tuple[str, str], deque[int]] = {}
        self.in_flight: list[Slot[int]] = []
        self.started: list[int] = []
        self.pushed: list[int] = []

    def _host(self, key: str, host: str) -> str:
        return f"{host}.{key}.test"

    @rule(key=st.sampled_from(KEYS), host=st.sampled_from(HOSTS), n=st.integers(1, 3))
    def push(self, key: str, host: str, n: int) -> None:
        for _ in range(n):
            item = self.next_item
            self.next_item += 1
            self.state.push(key, self._host(key, host), item)
            self.queued.setdefault((key, self._host(key, host)), deque()).append(item)
            self.pushed.append(item)

    @rule()
    def start(self) -> None:
        slot = self.state.pop_ready(self.now)
        if slot is None:
            assert not self.state.can_start(self.now)
            if self.state.in_flight < self.state.global_in_flight:
                # the hint the dispatcher sleeps on is the full scan's answer
                assert self.state.wake_hint == self.state.next_wake(self.now)
            return
        assert self.state.wake_hint is None
        q = self.queued[(slot.key, slot.host)]
        assert q.popleft() == slot.item  # FIFO per host
        s = self.state
        assert s.snapshot()[slot.key].in_flight <= s.cap(slot.key)
        assert s.in_flight <= s.global_in_flight
        host_busy = sum(1 for x in self.in_flight if x.host == slot.host) + 1
        assert host_busy <= s.per_host_in_flight
        self.in_flight.append(slot)
        self.started.append(slot.item)

    @precondition(lambda self: bool(self.in_flight))
    @rule(
        index=st.integers(0, 10),
        feedback=st.sampled_from(
            [
                OK,
                THROTTLED,
                Feedback(throttled=True, retry_after=5.0),
                Feedback(network_error=True),
            ]
        ),
    )
    def finish(self, index: int, feedback: Feedback) -> None:
        slot = self.in_flight.pop(index % len(self.in_flight))
        self.state.finish(slot, feedback, self.now)

    @rule(key=st.sampled_from(KEYS))
    def drop(self, key: str) -> None:
        dropped = self.state.drop(key)
        expected = []
        for (k, _host), q in self.queued.items():
            if k == key:
                expected.extend(q)
                q.clear()
        assert sorted(dropped) == sorted(expected)
        self.pushed = [i for i in self.pushed if i not in set(dropped)]

    @rule(dt=st.sampled_from([0.0, 0.25, 1.0, 3.0, 10.0]))
    def tick(self, dt: float) -> None:
        self.now += dt

    @invariant()
    def consistent(self) -> None:
        if not hasattr(self, "state"):
            return
        self.state.check_invariants()
        snap = self.state.snapshot()
        per_key = Counter[str]()
        for (key, _), q in self.queued.items():
            per_key[key] += len(q)
        for key in KEYS:
            queued = snap[key].queued if key in snap else 0
            assert queued == per_key[key]
            # the invariant, stated from outside
            assert (key in self.state.round()) == (per_key[key] > 0)
        assert self.state.in_flight == len(self.in_flight)

    def teardown(self) -> None:
        if not hasattr(self, "state"):
            return
        # Liveness: once everything finishes and time passes, every item is started exactly once.
        for _ in range(10_000):
            for slot in self.in_flight:
                self.state.finish(slot, OK, self.now)
            self.in_flight.clear()
            self.now += 1000.0
            while (slot := self.state.pop_ready(self.now)) is not None:
                self.in_flight.append(slot)
                self.started.append(slot.item)
            if not self.in_flight and self.state.idle:
                break
        assert sorted(self.started) == sorted(self.pushed)
        assert len(set(self.started)) == len(self.started)


DispatchMachine.TestCase.settings = hyp_settings(
    max_examples=150, stateful_step_count=60, deadline=None
)
TestDispatchMachine = DispatchMachine.TestCase
