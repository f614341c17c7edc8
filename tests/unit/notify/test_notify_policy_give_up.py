"""The pure parts of giving up on a message refused by policy: when its refusals began (read
off the row's last error) and whether it is time to stop."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from fairfetch.notify.backoff import POLICY_GIVE_UP_AFTER, policy_gives_up, policy_since
from fairfetch.notify.smtp import POLICY_REFUSAL

T = datetime(2026, 3, 2, 9, 2, tzinfo=UTC)


def test_notify_policy_give_up_after_is_three_days() -> None:
    assert timedelta(days=3) == POLICY_GIVE_UP_AFTER


@pytest.mark.parametrize(
    ("last_error", "since"),
    [
        (f"{POLICY_REFUSAL}since {T.isoformat()}: 554 5.7.1 blocked", T),
        (f"{POLICY_REFUSAL}since 2026-03-02T09:02:00.250000+00:00: 550 x",
         T + timedelta(microseconds=250000)),
        (f"{POLICY_REFUSAL}since 2026-03-02T10:02:00+01:00: 550 x", T),
        # an earlier version's reason (no time), another failure, nothing: the count starts now
        (f"{POLICY_REFUSAL}554 5.7.1 blocked", None),
        ("waiting for the mail server: cannot reach the mail server", None),
        ("451 4.7.1 Greylisted", None),
        ("since 2026-03-02T09:02:00+00:00: 550 not after the prefix", None),
        (f"{POLICY_REFUSAL}since 2026-03-02T09:02:00: naive time", None),
        (f"{POLICY_REFUSAL}since 2026-13-45T09:02:00+00:00: impossible date", None),
        ("", None),
        (None, None),
    ],
)
def test_notify_policy_since_is_read_off_the_last_error(
    last_error: str | None, since: datetime | None
) -> None:
    assert policy_since(last_error, POLICY_REFUSAL) == since


def test_notify_policy_gives_up_at_the_limit_and_not_before() -> None:
    assert not policy_gives_up(T, T)
    assert not policy_gives_up(T, T + POLICY_GIVE_UP_AFTER - timedelta(seconds=1))
    assert policy_gives_up(T, T + POLICY_GIVE_UP_AFTER)
    assert policy_gives_up(T, T + timedelta(days=30))
    assert not policy_gives_up(T, T + timedelta(hours=2), timedelta(hours=3))
    assert policy_gives_up(T, T + timedelta(hours=3), timedelta(hours=3))
