"""The subscription state machine (pure).

States::

    pending        subscribe requested (hub answered 202), waiting for the hub's verification
    active         verified; the lease runs until lease_expires_at
    denied         the hub said hub.mode=denied (reason recorded); we poll
    expired        the lease lapsed, or the subscribe request failed; we poll at the normal interval
    unsubscribing  unsubscribe requested (feed removed or dead), waiting for verification
    unsubscribed   the hub confirmed; terminal unless the feed is subscribed again

The intent is recorded *before* the request is sent (``subscribe_requested``,
``unsubscribe_requested``): many hubs verify before they even answer, and a verification must
find the subscription pending. A renewal keeps an active subscription active (the lease still
runs); only the hub's verification moves it on. Verification of intent is answered only for a
pending or active subscription (subscribe) or an unsubscribing one (unsubscribe): a hub
re-verifying an active subscription is normal; anything else is not ours to confirm.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["STATES", "Event", "InvalidTransition", "accepts_delivery", "accepts_verification",
           "polls_normally", "transition"]

STATES = ("pending", "active", "denied", "expired", "unsubscribing", "unsubscribed")


class Event(StrEnum):
    SUBSCRIBE_REQUESTED = "subscribe_requested"  # about to ask (before: hubs may verify first)
    SUBSCRIBE_ACCEPTED = "subscribe_accepted"   # hub answered 202 to our subscribe
    SUBSCRIBE_FAILED = "subscribe_failed"       # hub refused or unreachable
    VERIFIED = "verified"                       # hub verified a subscribe
    DENIED = "denied"                           # hub.mode=denied
    LEASE_LAPSED = "lease_lapsed"               # now >= lease_expires_at
    UNSUBSCRIBE_REQUESTED = "unsubscribe_requested"
    UNSUBSCRIBE_VERIFIED = "unsubscribe_verified"


class InvalidTransition(ValueError):
    def __init__(self, state: str, event: Event) -> None:
        super().__init__(f"{event.value} is not valid in state {state}")
        self.state = state
        self.event = event


_T: dict[tuple[str, Event], str] = {}
for _s in ("pending", "denied", "expired", "unsubscribed"):
    _T[(_s, Event.SUBSCRIBE_REQUESTED)] = "pending"
_T[("active", Event.SUBSCRIBE_REQUESTED)] = "active"         # renewal: the lease still runs
_T[("pending", Event.SUBSCRIBE_ACCEPTED)] = "pending"
_T[("active", Event.SUBSCRIBE_ACCEPTED)] = "active"
_T[("pending", Event.SUBSCRIBE_FAILED)] = "expired"
_T[("active", Event.SUBSCRIBE_FAILED)] = "active"            # failed renewal: lease still runs
_T[("expired", Event.SUBSCRIBE_FAILED)] = "expired"
_T[("denied", Event.SUBSCRIBE_FAILED)] = "denied"
_T[("unsubscribed", Event.SUBSCRIBE_FAILED)] = "unsubscribed"
_T[("pending", Event.VERIFIED)] = "active"
_T[("active", Event.VERIFIED)] = "active"
_T[("pending", Event.DENIED)] = "denied"
_T[("active", Event.DENIED)] = "denied"
_T[("denied", Event.DENIED)] = "denied"
_T[("active", Event.LEASE_LAPSED)] = "expired"
for _s in ("pending", "active", "denied", "expired", "unsubscribing"):
    _T[(_s, Event.UNSUBSCRIBE_REQUESTED)] = "unsubscribing"
_T[("unsubscribing", Event.UNSUBSCRIBE_VERIFIED)] = "unsubscribed"


def transition(state: str, event: Event) -> str:
    """The next state, or InvalidTransition (the caller answers 404 / records the anomaly)."""
    try:
        return _T[(state, event)]
    except KeyError:
        raise InvalidTransition(state, event) from None


def accepts_verification(state: str, mode: str) -> bool:
    if mode == "subscribe":
        return state in ("pending", "active")
    if mode == "unsubscribe":
        return state == "unsubscribing"
    return False


def accepts_delivery(state: str) -> bool:
    """Deliveries for a subscription we are leaving are refused with 410 (the hub drops us)."""
    return state in ("pending", "active", "expired", "denied")


def polls_normally(state: str) -> bool:
    """Only an active lease lets the crawler poll less often (the safety net)."""
    return state != "active"
