"""The probe queue: round-robin over hosts, one in flight per foreign host, and the invariant
"a host is in the round iff its queue is non-empty" checked in code."""

from __future__ import annotations

import pytest
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from fairfetch.audit.probe import ProbeQueue, ProbeQueueError


def test_audit_probe_second_url_of_a_seen_host_is_dispatched() -> None:
    # The incident: the host's entry outlived its queue; a second redirect to the same shop,
    # discovered later, was queued but its host never re-entered the round.
    q = ProbeQueue(100)
    assert q.register("http://shop.test/alive").accepted
    first = q.next()
    assert first == "http://shop.test/alive"
    q.done(first)
    assert q.next() is None
    assert q.pending() == 0
    assert q.register("http://shop.test/pulled").accepted
    assert q.next() == "http://shop.test/pulled"
    q.check_invariant()


def test_audit_probe_one_in_flight_per_host_and_round_robin() -> None:
    q = ProbeQueue(100)
    for u in ("http://a.test/1", "http://a.test/2", "http://b.test/1", "http://c.test/1"):
        q.register(u)
    got = [q.next(), q.next(), q.next()]
    assert got == ["http://a.test/1", "http://b.test/1", "http://c.test/1"]
    assert q.next() is None  # a.test/2 waits: a.test already has one in flight
    q.done("http://a.test/1")
    assert q.next() == "http://a.test/2"


def test_audit_probe_cap_counts_refusals_and_duplicates_are_not_requeued() -> None:
    q = ProbeQueue(2)
    assert q.register("http://a.test/1").accepted
    assert q.register("http://a.test/1").reason == "duplicate"
    assert q.register("http://b.test/1").accepted
    r = q.register("http://c.test/1")
    assert (r.accepted, r.reason) == (False, "over_cap")
    assert q.over_cap == 1
    # Uncapped registrations (the site's own assets) are not bounded by the externals cap.
    assert q.register("http://site.test/logo.png", capped=False).accepted


def test_audit_probe_stuck_state_is_loud() -> None:
    q = ProbeQueue(10)
    q.register("http://a.test/1")
    # Break the state the way the incident did: queue non-empty, host out of the round.
    q._round.clear()
    q._in_round.clear()
    with pytest.raises(ProbeQueueError):
        q.next()


def test_audit_probe_done_without_flight_is_loud() -> None:
    q = ProbeQueue(10)
    with pytest.raises(ProbeQueueError):
        q.done("http://nowhere.test/")


HOSTS = ["a.test", "b.test", "shop.test"]


class ProbeQueueMachine(RuleBasedStateMachine):
    """Adds URLs of the same hosts at separate moments, interleaved with dispatch and completion.

    Model: every accepted URL is dispatched exactly once; nothing stays pending when nothing is
    in flight and dispatch says there is nothing to do.
    """

    def __init__(self) -> None:
        super().__init__()
        self.q = ProbeQueue(10_000)
        self.accepted: set[str] = set()
        self.dispatched: list[str] = []
        self.in_flight: list[str] = []
        self.counter = 0

    @rule(host=st.sampled_from(HOSTS))
    def add(self, host: str) -> None:
        self.counter += 1
        url = f"http://{host}/p{self.counter}"
        assert self.q.register(url).accepted
        self.accepted.add(url)

    @rule()
    def dispatch(self) -> None:
        url = self.q.next()
        if url is None:
            busy = {u.split("/")[2] for u in self.in_flight}
            waiting = {u.split("/")[2] for u in self.accepted - set(self.dispatched)}
            assert waiting <= busy  # only hosts at their limit may wait
            return
        assert url not in self.dispatched
        assert url.split("/")[2] not in {u.split("/")[2] for u in self.in_flight}
        self.dispatched.append(url)
        self.in_flight.append(url)

    @precondition(lambda self: bool(self.in_flight))
    @rule(i=st.integers(min_value=0, max_value=100))
    def complete(self, i: int) -> None:
        url = self.in_flight.pop(i % len(self.in_flight))
        self.q.done(url)

    @invariant()
    def state_is_consistent(self) -> None:
        self.q.check_invariant()
        assert self.q.pending() == len(self.accepted) - len(self.dispatched)

    def teardown(self) -> None:
        # Drain: everything accepted gets dispatched exactly once.
        while self.in_flight or self.q.pending():
            for url in self.in_flight:
                self.q.done(url)
            self.in_flight.clear()
            while (url := self.q.next()) is not None:
                self.dispatched.append(url)
                self.in_flight.append(url)
        assert sorted(self.dispatched) == sorted(self.accepted)


ProbeQueueMachine.TestCase.settings = hsettings(max_examples=150, stateful_step_count=40,
                                                deadline=None)
TestAuditProbeQueueMachine = ProbeQueueMachine.TestCase
