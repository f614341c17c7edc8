"""Feed health: a pure state machine, (state, outcome, now, policy) -> decision.

Like lemon24/reader's ``Decider``, this touches no dependency: it reads the old state, the fetch
outcome and the time, and says which columns change. The pipeline does the I/O. The table it
implements is DESIGN.md's *Feed health*; every row has a test.

The rules that matter most:

- A throttle (429, or 503 with Retry-After) is a schedule instruction. It changes
  ``next_crawl_at`` and *nothing else*, not even ``last_fetched_at`` ("when we last read this
  publisher": a throttle is precisely the case where we did not). It is the crawl *rate* towards
  that backend that must come down (politeness), not the feed's health.
- Any other failure walks an exponential ladder, weighted by how much the failure says about the
  feed (a DNS failure or a 410 says more than one timeout), with jitter, capped.
- A robots.txt that answers 5xx (kind ``robots_unreachable``, no good copy standing in) keeps
  the feed unread, but it is not the feed's failure: the publisher forbade nothing and the feed
  may be fine. For ``robots_grace`` after the feed's last success (or its addition) it defers
  the feed to its usual interval, recording why in ``last_error``, and changes nothing else.
  Past that, RFC 9309 §2.3.1.4 lets a crawler assume robots.txt unavailable (no rules, as for
  a 4xx): :func:`robots_assumed_unavailable` says so, and the crawl loop then reads the feed
  without robots.txt (``Outcome.robots_absent``), noting it in ``last_error``
  (:data:`ROBOTS_ABSENT_MARK`) so ``feeds show`` tells why. The note is what keeps the feed in
  that regime (a read resets ``last_success_at``, which would otherwise start another month of
  deferral) until robots.txt answers again; that first normal read removes it.
- The 10th consecutive failure, or a 410, makes a feed dead: no ``next_crawl_at``; it is probed
  monthly (the store finds dead feeds by ``last_fetched_at``) and revived by any success.
- So does kind ``duplicate``: a confirmed move onto a URL another feed already has (the crawl
  loop finds it; the store would refuse the move). Crawling both would fetch one URL twice a
  round and store its items twice; the feed that has the URL carries on. Its monthly probe
  revives the duplicate if the redirect goes away (or the other feed does).
"""

from __future__ import annotations

import hashlib
import itertools
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

__all__ = [
    "FAILURE_WEIGHTS",
    "ROBOTS_ABSENT_MARK",
    "Decision",
    "FeedState",
    "HealthPolicy",
    "Outcome",
    "adaptive_interval",
    "backoff_delay",
    "decide",
    "jitter_fraction",
    "robots_assumed_unavailable",
]


#: How many of a feed's most recent entry dates its publishing rate is estimated from.
RECENT_ENTRIES = 20


@dataclass(frozen=True)
class HealthPolicy:
    min_interval: float = 15 * 60.0
    max_interval: float = 24 * 3600.0
    default_interval: float = 3600.0
    dead_after: int = 10
    #: First rung of the failure ladder, and its cap.
    backoff_base: float = 10 * 60.0
    backoff_cap: float = 24 * 3600.0
    #: ± fraction of jitter on every interval, so feeds added together don't stay in lockstep.
    jitter: float = 0.1
    #: Permanent redirects move the feed after the same target answered this many crawls running.
    redirect_confirmations: int = 2
    #: How long after the feed's last success (or its addition) a robots.txt answering 5xx
    #: defers the feed instead of counting against it: RFC 9309's "reasonably long period"
    #: (its example, 30 days, is also how long a good robots.txt copy stands in).
    robots_grace: float = 30 * 24 * 3600.0

    @classmethod
    def from_settings(cls, settings: Any) -> HealthPolicy:
        return cls(
            min_interval=settings.min_interval,
            max_interval=settings.max_interval,
            default_interval=settings.default_interval,
            dead_after=settings.dead_after,
        )


#: How much one failure of a kind pushes the ladder: kinds that say "this feed is wrong" weigh
#: more than kinds that say "this moment was bad".
FAILURE_WEIGHTS: dict[str, float] = {
    "timeout": 1.0,
    "connect": 1.0,
    "http": 1.0,  # 5xx mostly; 4xx gets 2.0 below
    "too_large": 2.0,
    "not_a_feed": 2.0,
    "parse": 2.0,
    "redirect": 2.0,
    "blocked": 2.0,
    "robots": 2.0,
    "robots_unreachable": 1.0,  # a 5xx, on robots.txt; counted only past the grace
    "tls": 2.0,
    "dns": 3.0,
    "perimeter": 4.0,
    "gone": 4.0,
}


@dataclass(frozen=True)
class FeedState:
    url: str
    status: str = "new"
    error_count: int = 0
    last_error: str | None = None
    last_success_at: datetime | None = None
    last_fetched_at: datetime | None = None
    next_crawl_at: datetime | None = None
    interval_seconds: float | None = None
    redirect_candidate: str | None = None
    redirect_candidate_count: int = 0
    added_at: datetime | None = None
    #: The latest publication date of any entry stored for the feed (dates the silence a 304
    #: cannot show).
    newest_entry_at: datetime | None = None


@dataclass(frozen=True)
class Outcome:
    """What a crawl attempt found, reduced to what health needs."""

    #: ok | not_modified | throttled | error
    kind: str
    error_kind: str | None = None
    error_detail: str = ""
    http_status: int | None = None
    retry_after: float | None = None
    #: Final URL when every hop of the redirect chain was permanent (301/308); else None.
    permanent_target: str | None = None
    #: ``itunes:new-feed-url``: the publisher says it moved (a confirmed move).
    new_feed_url: str | None = None
    #: Publisher hints in seconds (<ttl>, sy:updatePeriod, Cache-Control max-age, …).
    hint_seconds: float | None = None
    #: Publication times of the entries in the document, for the adaptive interval.
    entry_times: Sequence[datetime] = field(default_factory=tuple)
    #: The feed was fetched as if its robots.txt were absent (unreachable past the grace).
    robots_absent: bool = False


@dataclass(frozen=True)
class Decision:
    #: Only the feed columns that change; a throttle names ``next_crawl_at`` alone.
    changes: dict[str, Any]
    #: The outcome label recorded in ``crawls.outcome``.
    outcome: str


def jitter_fraction(url: str, now: datetime) -> float:
    """A deterministic value in [-1, 1) from the feed and the time, so decisions stay pure."""
    digest = hashlib.blake2b(f"{url}|{now.isoformat()}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**63 - 1.0


def _jittered(seconds: float, url: str, now: datetime, policy: HealthPolicy) -> float:
    return seconds * (1.0 + policy.jitter * jitter_fraction(url, now))


def _weight(error_kind: str | None, http_status: int | None) -> float:
    if error_kind == "http" and http_status is not None and 400 <= http_status < 500:
        return 2.0
    return FAILURE_WEIGHTS.get(error_kind or "", 1.0)


def backoff_delay(error_count: int, weight: float, policy: HealthPolicy) -> float:
    """The failure ladder: base × 2^(n-1) × weight, capped; ``error_count`` counts this one."""
    steps = max(0, error_count - 1)
    delay = policy.backoff_base * (2.0 ** min(steps, 20)) * weight
    return min(delay, policy.backoff_cap)


def adaptive_interval(
    entry_times: Sequence[datetime],
    hint_seconds: float | None,
    previous: float | None,
    policy: HealthPolicy,
    *,
    now: datetime | None = None,
) -> float:
    """How often to look again, from the feed's observed publishing rate, within bounds.

    Half the median gap between recent entries (so a new item waits on average a quarter of the
    feed's rhythm), or the previous interval when the feed gives no dates. With ``now``, the
    silence since the newest entry counts too: the rate observed up to now (the recent entries
    over the time from the oldest of them to now) is a floor, so a feed that stopped
    publishing is read less and less often instead of at its old rhythm for ever; entries dated
    after ``now`` say nothing about it. A publisher's own hint (ttl, updatePeriod, max-age)
    wins over our estimate; both are clamped to the policy's bounds.
    """
    if hint_seconds is not None and hint_seconds > 0:
        estimate = hint_seconds
    else:
        times = sorted({t for t in entry_times if t is not None}, reverse=True)[:RECENT_ENTRIES]
        if len(times) >= 2:
            gaps = [(a - b).total_seconds() for a, b in itertools.pairwise(times)]
            gaps = [g for g in gaps if g > 0]
            estimate = statistics.median(gaps) / 2 if gaps else policy.default_interval
        else:
            estimate = previous or policy.default_interval
        past = [t for t in times if t <= now] if now is not None else []
        if now is not None and past:
            # n entries and the open gap since the newest: n gaps over (now - oldest).
            observed = (now - past[-1]).total_seconds() / len(past) / 2
            estimate = max(estimate, observed)
    return max(policy.min_interval, min(policy.max_interval, estimate))


def _redirect_changes(state: FeedState, outcome: Outcome, policy: HealthPolicy) -> dict[str, Any]:
    if outcome.new_feed_url and outcome.new_feed_url != state.url:
        return {
            "url": outcome.new_feed_url,
            "redirect_candidate": None,
            "redirect_candidate_count": 0,
        }
    target = outcome.permanent_target
    if not target or target == state.url:
        if state.redirect_candidate is None and state.redirect_candidate_count == 0:
            return {}
        return {"redirect_candidate": None, "redirect_candidate_count": 0}
    count = state.redirect_candidate_count + 1 if target == state.redirect_candidate else 1
    if count >= policy.redirect_confirmations:
        return {"url": target, "redirect_candidate": None, "redirect_candidate_count": 0}
    return {"redirect_candidate": target, "redirect_candidate_count": count}


def _within_robots_grace(state: FeedState, now: datetime, policy: HealthPolicy) -> bool:
    """Whether the feed was read (or added) recently enough for an unreachable robots.txt to be
    given the benefit of the doubt; a feed with neither date has none."""
    since = state.last_success_at or state.added_at
    return since is not None and (now - since).total_seconds() < policy.robots_grace


#: In ``last_error`` (and the crawls row) of a feed read as if its robots.txt were absent.
ROBOTS_ABSENT_MARK = (
    "robots.txt unreachable for over the grace (30 days): read as if absent (RFC 9309 §2.3.1.4)"
)
_ROBOTS_ABSENT_NOTE = f"robots_unavailable: {ROBOTS_ABSENT_MARK}"


def robots_assumed_unavailable(state: FeedState, now: datetime, policy: HealthPolicy) -> bool:
    """Whether a feed whose robots.txt is unreachable now (no good copy standing in) is read as
    if robots.txt were absent.

    Yes when the feed is already read that way (its ``last_error`` carries the mark), or when
    it has been deferred for an unreachable robots.txt (its last attempt said so) for longer
    than ``robots_grace`` since its last success or addition. A feed whose last attempt failed
    for another reason (a dead feed's monthly probe) has no evidence that robots.txt has been
    unreachable for long, so one 5xx today does not lift the rules.
    """
    last = state.last_error or ""
    if ROBOTS_ABSENT_MARK in last:
        return True
    return last.startswith("robots_unreachable") and not _within_robots_grace(state, now, policy)


def decide(state: FeedState, outcome: Outcome, now: datetime, policy: HealthPolicy) -> Decision:
    """The new values of the feed's columns after ``outcome``, per DESIGN.md's table."""
    if outcome.kind == "throttled":
        delay = outcome.retry_after if outcome.retry_after is not None else 1800.0
        return Decision({"next_crawl_at": now + timedelta(seconds=delay)}, "throttled")

    if outcome.kind in ("ok", "not_modified"):
        hint = outcome.hint_seconds
        if outcome.kind == "not_modified" and state.interval_seconds:
            # A 304 has no body: the document's hints (<ttl>, updatePeriod) are not in it, and
            # nothing changed since the interval was decided on the last full read. That
            # interval stands as a floor, so a 304's headers alone (a CDN's max-age) never
            # undo a <ttl>, and the jitter never takes the feed under it.
            hint = max(hint or 0.0, state.interval_seconds)
            newest = state.newest_entry_at
            if newest is not None and newest <= now:
                # Nothing new since the newest entry: the silence, spread over a full window of
                # recent entries, is a floor below what a 200 of the same feed would compute,
                # so a feed that stopped publishing is read less and less often on 304s too.
                silence = (now - newest).total_seconds() / (2 * RECENT_ENTRIES)
                hint = max(hint, silence)
        interval = adaptive_interval(
            outcome.entry_times, hint, state.interval_seconds, policy, now=now
        )
        # Jitter spreads feeds inside the bounds, never past them: read at least every
        # max_interval, and never sooner than min_interval or the publisher's own hint (a
        # <ttl> of an hour means "not before an hour").
        floor = policy.min_interval
        if hint is not None and hint > 0:
            floor = max(floor, min(hint, policy.max_interval))
        delay = min(policy.max_interval, max(floor, _jittered(interval, state.url, now, policy)))
        changes: dict[str, Any] = {
            "status": "ok",
            "error_count": 0,
            "last_success_at": now,
            "last_fetched_at": now,
            "interval_seconds": interval,
            "next_crawl_at": now + timedelta(seconds=delay),
        }
        if outcome.robots_absent:
            changes["last_error"] = _ROBOTS_ABSENT_NOTE
        elif state.last_error and ROBOTS_ABSENT_MARK in state.last_error:
            changes["last_error"] = None  # robots.txt answered again: the note no longer holds
        changes.update(_redirect_changes(state, outcome, policy))
        return Decision(changes, outcome.kind)

    # Any other failure.
    kind = outcome.error_kind or "http"
    detail = outcome.error_detail or (f"HTTP {outcome.http_status}" if outcome.http_status else "")
    count = state.error_count + 1
    last_error = f"{kind}: {detail}" if detail else kind
    if outcome.robots_absent:
        last_error = f"{last_error}; {ROBOTS_ABSENT_MARK}"
    if kind == "robots_unreachable" and _within_robots_grace(state, now, policy):
        # Not the feed's failure: look again at the feed's own rhythm, say why, touch nothing
        # else (not last_fetched_at either: we did not read the publisher's feed).
        interval = max(
            policy.min_interval,
            min(policy.max_interval, state.interval_seconds or policy.default_interval),
        )
        wait = min(
            policy.max_interval,
            max(policy.min_interval, _jittered(interval, state.url, now, policy)),
        )
        return Decision(
            {"last_error": last_error, "next_crawl_at": now + timedelta(seconds=wait)}, "error"
        )
    changes = {"error_count": count, "last_error": last_error, "last_fetched_at": now}
    # A dead feed is revived by a success, not by a failed probe: one that a 410 (or a
    # duplicate) made dead with a short count stays dead until its next monthly probe.
    if state.status == "dead" or kind in ("gone", "duplicate") or count >= policy.dead_after:
        changes.update(status="dead", next_crawl_at=None)
    else:
        delay = backoff_delay(count, _weight(kind, outcome.http_status), policy)
        jittered = min(policy.backoff_cap, _jittered(delay, state.url, now, policy))
        changes.update(status="error", next_crawl_at=now + timedelta(seconds=jittered))
    return Decision(changes, "error")
