"""Who pays for a notification: the pure decision behind the ledger.

A publisher can sponsor a feed ("owner-paid"): its readers are not charged for it, and the
publisher pays one credit per real-time email and one credit per digest issue that contains at
least one item of its feeds, however many — so a digest never costs it more than real-time would.
When its balance runs out the mail is still sent (nothing is silently dropped): the reader pays
and is told in that mail.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

__all__ = ["Charge", "Decision", "decide_digest", "decide_realtime"]


@dataclass(frozen=True)
class Charge:
    """One ledger charge: ``party`` is ``("publisher", id)`` or ``("reader", id)``."""

    party: tuple[str, int]
    amount: int = 1
    note: str = ""


@dataclass(frozen=True)
class Decision:
    charges: tuple[Charge, ...] = ()
    #: publishers whose sponsorship could not pay for their items in this message: the reader is
    #: told (and pays instead)
    exhausted: tuple[int, ...] = field(default_factory=tuple)


def decide_realtime(
    reader_id: int, feed_id: int, sponsors: Mapping[int, int], balances: Mapping[int, int]
) -> Decision:
    """One real-time email for an item of ``feed_id``.

    ``sponsors`` maps feed id -> publisher id; ``balances`` maps publisher id -> credits left.
    """
    pub = sponsors.get(feed_id)
    if pub is not None and balances.get(pub, 0) >= 1:
        return Decision((Charge(("publisher", pub), 1, f"realtime feed {feed_id}"),))
    exhausted = (pub,) if pub is not None else ()
    return Decision((Charge(("reader", reader_id), 1, f"realtime feed {feed_id}"),), exhausted)


def decide_digest(
    reader_id: int,
    item_feeds: Iterable[int],
    sponsors: Mapping[int, int],
    balances: Mapping[int, int],
) -> Decision:
    """One digest issue whose items come from ``item_feeds`` (one feed id per item).

    Each sponsoring publisher with at least one credit pays 1 for the issue; the reader pays 1 when
    the issue holds at least one item nobody sponsors (or whose sponsor is out of credit).
    """
    feeds = list(item_feeds)
    if not feeds:
        return Decision()
    charges: list[Charge] = []
    exhausted: list[int] = []
    reader_pays = False
    paying: list[int] = []
    for pub in sorted({sponsors[f] for f in feeds if f in sponsors}):
        if balances.get(pub, 0) >= 1:
            paying.append(pub)
            charges.append(Charge(("publisher", pub), 1, "digest issue"))
        else:
            exhausted.append(pub)
            reader_pays = True
    if any(f not in sponsors for f in feeds):
        reader_pays = True
    if reader_pays:
        charges.append(Charge(("reader", reader_id), 1, "digest issue"))
    return Decision(tuple(charges), tuple(exhausted))
