"""Point 6 of issue 5, the filter FeedMail wrote the wrong way round (seeds/003).

Each branch is tested in both directions: what it must drop and what it must keep, on each side
of each threshold, and with the thresholds changed.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fairfetch.config import Settings
from fairfetch.websub.ping import (
    EntryDecision,
    NamedEntry,
    decide_entry,
    decide_ping,
    is_too_old,
    needs_refetch,
)

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
S = Settings()
OLD = S.websub_ignore_older_than      # 14 days
GIVE_UP = S.websub_give_up_after      # 4 hours
DAY = timedelta(days=1)
HOUR = timedelta(hours=1)


def decide(entry: NamedEntry, present: frozenset[str] | None = frozenset()) -> EntryDecision:
    return decide_entry(entry, present, NOW, ignore_older_than=OLD, give_up_after=GIVE_UP)


def test_websub_defaults_are_the_feedmail_thresholds() -> None:
    assert OLD == 14 * 86400
    assert GIVE_UP == 4 * 3600


# --- branch 1: published more than 14 days ago -> 2xx, ignored -----------------------------------

def test_websub_published_15_days_ago_is_ignored() -> None:
    e = NamedEntry("v", published=NOW - 15 * DAY, updated=NOW - HOUR)
    assert decide(e) is EntryDecision.TOO_OLD
    assert not needs_refetch([e], NOW, ignore_older_than=OLD)


def test_websub_published_yesterday_is_not_ignored() -> None:
    """The outage: this must NOT be dropped. A fresh video is processed."""
    e = NamedEntry("v", published=NOW - DAY, updated=NOW - HOUR)
    assert decide(e, frozenset({"v"})) is EntryDecision.FOUND
    assert decide(e) is EntryDecision.RETRY
    assert needs_refetch([e], NOW, ignore_older_than=OLD)


def test_websub_published_just_now_is_not_ignored() -> None:
    e = NamedEntry("v", published=NOW, updated=NOW)
    assert not is_too_old(e, NOW, OLD)
    assert decide(e) is EntryDecision.RETRY


def test_websub_published_in_future_is_not_ignored() -> None:
    e = NamedEntry("v", published=NOW + HOUR)
    assert decide(e) is EntryDecision.RETRY


def test_websub_threshold_boundary_both_sides() -> None:
    at = NamedEntry("v", published=NOW - timedelta(seconds=OLD))
    past = NamedEntry("v", published=NOW - timedelta(seconds=OLD + 1))
    inside = NamedEntry("v", published=NOW - timedelta(seconds=OLD - 1))
    assert not is_too_old(at, NOW, OLD)
    assert is_too_old(past, NOW, OLD)
    assert not is_too_old(inside, NOW, OLD)


def test_websub_old_video_edited_today_still_ignored() -> None:
    """YouTube re-pings years-old videos on title edits: updated is recent, published is not."""
    e = NamedEntry("v", published=NOW - 3 * 365 * DAY, updated=NOW - timedelta(minutes=5))
    assert decide(e) is EntryDecision.TOO_OLD


def test_websub_old_but_present_is_still_ignored() -> None:
    e = NamedEntry("v", published=NOW - 20 * DAY)
    assert decide(e, frozenset({"v"})) is EntryDecision.TOO_OLD


def test_websub_unknown_published_never_too_old() -> None:
    e = NamedEntry("v", published=None, updated=NOW - 30 * DAY)
    assert not is_too_old(e, NOW, OLD)
    assert decide(e) is EntryDecision.GIVE_UP  # missing and stale by its update date


def test_websub_ignore_threshold_configurable() -> None:
    e = NamedEntry("v", published=NOW - 3 * DAY)
    assert decide_entry(e, frozenset(), NOW, ignore_older_than=2 * 86400,
                        give_up_after=GIVE_UP) is EntryDecision.TOO_OLD
    assert decide_entry(e, frozenset(), NOW, ignore_older_than=4 * 86400,
                        give_up_after=GIVE_UP) is not EntryDecision.TOO_OLD


# --- branch 2: present in the re-fetched feed -> 2xx ---------------------------------------------

def test_websub_present_entry_is_found() -> None:
    e = NamedEntry("yt:video:a", published=NOW - HOUR, updated=NOW - HOUR)
    assert decide(e, frozenset({"yt:video:a", "yt:video:b"})) is EntryDecision.FOUND


def test_websub_absent_entry_is_not_found() -> None:
    e = NamedEntry("yt:video:a", published=NOW - HOUR, updated=NOW - HOUR)
    assert decide(e, frozenset({"yt:video:b"})) is EntryDecision.RETRY


def test_websub_failed_refetch_counts_as_absent() -> None:
    e = NamedEntry("yt:video:a", published=NOW - HOUR, updated=NOW - HOUR)
    assert decide(e, None) is EntryDecision.RETRY


# --- branch 3: missing -> non-2xx, unless updated more than 4 hours ago -> 2xx -------------------

def test_websub_missing_recent_is_retried() -> None:
    e = NamedEntry("v", published=NOW - 2 * HOUR, updated=NOW - 3 * HOUR)
    assert decide(e) is EntryDecision.RETRY
    assert not decide_ping([e], frozenset(), NOW, ignore_older_than=OLD,
                           give_up_after=GIVE_UP).acknowledge


def test_websub_missing_stale_gives_up() -> None:
    e = NamedEntry("v", published=NOW - 2 * DAY, updated=NOW - 5 * HOUR)
    assert decide(e) is EntryDecision.GIVE_UP
    assert decide_ping([e], frozenset(), NOW, ignore_older_than=OLD,
                       give_up_after=GIVE_UP).acknowledge


def test_websub_give_up_boundary_both_sides() -> None:
    at = NamedEntry("v", published=NOW - DAY, updated=NOW - timedelta(seconds=GIVE_UP))
    past = NamedEntry("v", published=NOW - DAY, updated=NOW - timedelta(seconds=GIVE_UP + 1))
    assert decide(at) is EntryDecision.RETRY
    assert decide(past) is EntryDecision.GIVE_UP


def test_websub_give_up_uses_updated_not_published() -> None:
    """Published long ago (but < 14 d), updated recently: a fresh edit, still retried."""
    e = NamedEntry("v", published=NOW - 5 * DAY, updated=NOW - HOUR)
    assert decide(e) is EntryDecision.RETRY


def test_websub_give_up_falls_back_to_published() -> None:
    assert decide(NamedEntry("v", published=NOW - 5 * HOUR)) is EntryDecision.GIVE_UP
    assert decide(NamedEntry("v", published=NOW - 3 * HOUR)) is EntryDecision.RETRY


def test_websub_no_dates_missing_is_retried() -> None:
    assert decide(NamedEntry("v")) is EntryDecision.RETRY


def test_websub_give_up_threshold_configurable() -> None:
    e = NamedEntry("v", published=NOW - DAY, updated=NOW - 2 * HOUR)
    assert decide_entry(e, frozenset(), NOW, ignore_older_than=OLD,
                        give_up_after=3600) is EntryDecision.GIVE_UP
    assert decide_entry(e, frozenset(), NOW, ignore_older_than=OLD,
                        give_up_after=3 * 3600) is EntryDecision.RETRY


# --- whole pings ------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("entries", "present", "ack", "outcome"),
    [
        ([NamedEntry("a", NOW - 20 * DAY)], frozenset(), True, "ignored"),
        ([NamedEntry("a", NOW - HOUR)], frozenset({"a"}), True, "accepted"),
        ([NamedEntry("a", NOW - HOUR)], frozenset(), False, "retried"),
        ([NamedEntry("a", NOW - 20 * DAY), NamedEntry("b", NOW - HOUR)], frozenset(), False,
         "retried"),
        ([NamedEntry("a", NOW - 20 * DAY), NamedEntry("b", NOW - HOUR)], frozenset({"b"}), True,
         "accepted"),
        ([NamedEntry("a", NOW - DAY, NOW - 6 * HOUR)], frozenset(), True, "accepted"),
    ],
)
def test_websub_ping_answer(entries: list[NamedEntry], present: frozenset[str], ack: bool,
                            outcome: str) -> None:
    d = decide_ping(entries, present, NOW, ignore_older_than=OLD, give_up_after=GIVE_UP)
    assert d.acknowledge is ack
    assert d.outcome == outcome


_times = st.integers(min_value=-400 * 86400, max_value=86400).map(
    lambda s: NOW + timedelta(seconds=s))


@given(published=st.none() | _times, updated=st.none() | _times, present=st.booleans())
def test_websub_ping_rules_hold(published: datetime | None, updated: datetime | None,
                                present: bool) -> None:
    e = NamedEntry("v", published, updated)
    d = decide(e, frozenset({"v"}) if present else frozenset())
    too_old = published is not None and (NOW - published).total_seconds() > OLD
    # ignored iff published more than 14 days ago, whatever else is true
    assert (d is EntryDecision.TOO_OLD) == too_old
    if not too_old and present:
        assert d is EntryDecision.FOUND
    if d is EntryDecision.RETRY:
        last = updated or published
        assert not present
        assert last is None or (NOW - last).total_seconds() <= GIVE_UP
