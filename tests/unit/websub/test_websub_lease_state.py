"""Lease schedule and the subscription state machine (property-tested)."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fairfetch.websub import lease
from fairfetch.websub.state import (
    STATES,
    Event,
    InvalidTransition,
    accepts_delivery,
    accepts_verification,
    polls_normally,
    transition,
)

T0 = datetime(2026, 1, 1, tzinfo=UTC)


@given(lease_seconds=st.integers(min_value=1, max_value=10 * 365 * 86400),
       seed=st.integers(min_value=0, max_value=2**32))
def test_websub_renewal_inside_lease_around_half(lease_seconds: int, seed: int) -> None:
    at = lease.renew_at(T0, lease_seconds, random.Random(seed))
    effective = max(lease_seconds, lease.MIN_LEASE)
    offset = (at - T0).total_seconds()
    low, high = effective / 2 * (1 - lease.JITTER), effective / 2 * (1 + lease.JITTER)
    assert low - 1e-6 <= offset <= high + 1e-6
    if lease_seconds >= lease.MIN_LEASE:
        assert at < lease.expires_at(T0, lease_seconds)
    # however short the grant, the renewal comes before the lease is taken to end
    assert at < lease.expires_at(T0, lease_seconds)


def test_websub_renewals_are_jittered() -> None:
    rng = random.Random(7)
    times = {lease.renew_at(T0, 864000, rng) for _ in range(20)}
    assert len(times) > 15


def test_websub_retry_delay_grows_and_is_capped() -> None:
    rng = random.Random(1)
    small = max(lease.retry_delay(1, rng=rng) for _ in range(200))
    big = max(lease.retry_delay(10, rng=rng) for _ in range(200))
    assert small <= 120 < big <= 6 * 3600
    assert min(lease.retry_delay(0, rng=rng) for _ in range(200)) >= 30


@pytest.mark.parametrize(
    ("raw", "kept"),
    [
        ("86400", 86400),  # an ordinary grant is kept exactly
        ("1", 1),
        (str(lease.MAX_LEASE), lease.MAX_LEASE),
        (str(lease.MAX_LEASE + 1), lease.MAX_LEASE),  # longer grants are taken as the ceiling
        ("2147483648", lease.MAX_LEASE),
        (str(10**40), lease.MAX_LEASE),
        (None, None),  # absent, or not a positive whole number: the requested lease stands
        ("", None),
        ("0", None),
        ("-5", None),
        ("1.5", None),
        ("ten days", None),
    ],
)
def test_websub_granted_lease_parsed_and_bounded(raw: str | None, kept: int | None) -> None:
    assert lease.granted(raw) == kept
    if kept is not None and kept >= 2 * lease.MIN_LEASE:  # dates representable, renewal inside
        assert lease.renew_at(T0, kept) < lease.expires_at(T0, kept)


def test_websub_expiry() -> None:
    assert lease.expires_at(T0, 3600) == T0 + timedelta(hours=1)
    assert lease.expires_at(T0, lease.MIN_LEASE) == T0 + timedelta(seconds=lease.MIN_LEASE)
    assert lease.expires_at(T0, 1) == T0 + timedelta(seconds=lease.MIN_LEASE)


def test_websub_happy_path() -> None:
    s = transition("pending", Event.VERIFIED)
    assert s == "active"
    s = transition(s, Event.SUBSCRIBE_ACCEPTED)  # renewal keeps the lease running
    assert s == "active"
    s = transition(s, Event.LEASE_LAPSED)
    assert s == "expired"
    with pytest.raises(InvalidTransition):  # the intent is recorded before asking
        transition(s, Event.SUBSCRIBE_ACCEPTED)
    assert transition(s, Event.SUBSCRIBE_REQUESTED) == "pending"
    assert transition("denied", Event.SUBSCRIBE_REQUESTED) == "pending"


def test_websub_denied_from_pending_and_active() -> None:
    assert transition("pending", Event.DENIED) == "denied"
    assert transition("active", Event.DENIED) == "denied"
    with pytest.raises(InvalidTransition):
        transition("unsubscribing", Event.DENIED)


def test_websub_failed_renewal_keeps_active_failed_first_subscribe_expires() -> None:
    assert transition("active", Event.SUBSCRIBE_FAILED) == "active"
    assert transition("pending", Event.SUBSCRIBE_FAILED) == "expired"


def test_websub_verification_acceptance() -> None:
    assert accepts_verification("pending", "subscribe")
    assert accepts_verification("active", "subscribe")  # hubs re-verify active ones
    for s in ("denied", "expired", "unsubscribing", "unsubscribed"):
        assert not accepts_verification(s, "subscribe")
    assert accepts_verification("unsubscribing", "unsubscribe")
    for s in ("pending", "active", "denied", "expired", "unsubscribed"):
        assert not accepts_verification(s, "unsubscribe")
    assert not accepts_verification("active", "publish")


def test_websub_only_active_relaxes_polling() -> None:
    assert not polls_normally("active")
    for s in STATES:
        if s != "active":
            assert polls_normally(s)


@given(st.lists(st.sampled_from(list(Event)), max_size=40))
def test_websub_state_machine_properties(events: list[Event]) -> None:
    state = "pending"
    for ev in events:
        before = state
        try:
            state = transition(state, ev)
        except InvalidTransition:
            assert state == before
            continue
        assert state in STATES
        # active only by the hub's verification (or staying active)
        if state == "active":
            assert before == "active" or ev is Event.VERIFIED
        # unsubscribed only from unsubscribing, by the hub's verification
        if state == "unsubscribed" and before != "unsubscribed":
            assert before == "unsubscribing"
            assert ev is Event.UNSUBSCRIBE_VERIFIED
        # we never deliver-accept a subscription we are leaving
        if state in ("unsubscribing", "unsubscribed"):
            assert not accepts_delivery(state)
