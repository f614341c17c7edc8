"""Who pays: owner-paid feeds, digests that mix sponsored and other feeds, empty balances."""

from __future__ import annotations

from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from fairfetch.notify.billing import Charge, decide_digest, decide_realtime

SPONSORS = {10: 1, 11: 1, 20: 2}  # feeds 10, 11 paid by publisher 1; feed 20 by publisher 2


def test_notify_realtime_sponsored_feed_charges_the_publisher_only():
    d = decide_realtime(7, 10, SPONSORS, {1: 5})
    assert d.charges == (Charge(("publisher", 1), 1, "realtime feed 10"),)
    assert d.exhausted == ()


def test_notify_realtime_unsponsored_feed_charges_the_reader():
    d = decide_realtime(7, 99, SPONSORS, {1: 5})
    assert [c.party for c in d.charges] == [("reader", 7)]
    assert d.exhausted == ()


def test_notify_realtime_empty_balance_still_sends_and_tells_the_reader():
    d = decide_realtime(7, 10, SPONSORS, {1: 0})
    assert [c.party for c in d.charges] == [("reader", 7)]
    assert d.exhausted == (1,)


def test_notify_digest_mixed_charges_each_party_once():
    # 3 items of feed 10, 1 of feed 11 (both publisher 1), 2 of feed 20 (publisher 2), 1 other
    d = decide_digest(7, [10, 10, 10, 11, 20, 20, 99], SPONSORS, {1: 5, 2: 5})
    assert Counter(c.party for c in d.charges) == Counter(
        {("publisher", 1): 1, ("publisher", 2): 1, ("reader", 7): 1}
    )
    # only sponsored items: the reader pays nothing
    d = decide_digest(7, [10, 20], SPONSORS, {1: 5, 2: 5})
    assert ("reader", 7) not in {c.party for c in d.charges}
    # nothing sponsored: the reader pays one per issue
    d = decide_digest(7, [98, 99, 99], SPONSORS, {})
    assert [c.party for c in d.charges] == [("reader", 7)]
    assert decide_digest(7, [], SPONSORS, {}).charges == ()


def test_notify_digest_with_exhausted_sponsor():
    d = decide_digest(7, [10, 20], SPONSORS, {1: 0, 2: 3})
    assert {c.party for c in d.charges} == {("publisher", 2), ("reader", 7)}
    assert d.exhausted == (1,)


feeds = st.lists(st.sampled_from([10, 11, 20, 98, 99]), min_size=1, max_size=30)
bal = st.dictionaries(st.sampled_from([1, 2]), st.integers(0, 3))


@given(feeds, bal)
def test_notify_digest_never_costs_a_publisher_more_than_realtime(items, balances):
    digest = Counter(c.party for c in decide_digest(7, items, SPONSORS, balances).charges)
    realtime: Counter[tuple[str, int]] = Counter()
    left = dict(balances)
    for f in items:
        d = decide_realtime(7, f, SPONSORS, left)
        for c in d.charges:
            realtime[c.party] += c.amount
            if c.party[0] == "publisher":
                left[c.party[1]] -= c.amount
    for pub in (1, 2):
        assert digest[("publisher", pub)] <= realtime[("publisher", pub)]
        assert digest[("publisher", pub)] <= 1
    # every issue is paid by somebody, and nobody pays twice for one issue
    assert sum(digest.values()) >= 1
    assert max(digest.values()) == 1
