"""Backends found by evidence (DESIGN.md, Politeness), and only while the evidence holds.

A shared CDN / anycast address serves thousands of unrelated sites, each with its own rate
limit. Two of them throttling us in the same minute is a coincidence there, not a shared
backend; the grouper used to merge them for ever and then let every later site throttled on that
address join at once, until thousands of sites shared one budget of 2 requests in flight. The
rule now: a host is grouped only on its own correlated evidence (a throttle within the window of
one from another domain on its address), and the grouping lasts while that evidence holds (an
hour, doubling each time the same host is grouped again, so a real shared backend that throttles
whenever we let go is held longer and longer).
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from fairfetch.net.politeness_keys import BackendGrouper, registrable_domain

ADDR = "198.51.100.7"
KEY = f"backend:addr:{ADDR}"
HOUR = 3600.0


def test_grouper_cdn_address_does_not_merge_unrelated_sites_for_ever() -> None:
    """Two unrelated sites throttle us in one minute (a group, as DESIGN.md asks), then 50
    other sites on the same address are each throttled once, hours apart: none of them joins,
    and the pair is let go once its evidence is old. (Before: all 52 under one key.)"""
    g = BackendGrouper(window=60.0)
    g.observe_throttle("shop.alpha.test", ADDR, 100.0)
    assert g.observe_throttle("blog.beta.test", ADDR, 130.0) == KEY
    others = [f"www.site{i}.test" for i in range(50)]
    # The first few come while the pair is still held (minutes apart), the rest hours apart.
    times = [130.0 + 61.0 * (i + 1) for i in range(5)]
    times += [10_000.0 + 3 * HOUR * i for i in range(45)]
    for host, now in zip(others, times, strict=True):
        assert g.observe_throttle(host, ADDR, now) is None, host
        assert g.backend_for(host) is None, host
    assert all(g.backend_for(h) is None for h in others)
    assert g.backend_for("shop.alpha.test") is None  # the pair's evidence is days old
    assert g.groups() == {}


def test_grouper_a_single_throttle_does_not_join_a_held_group() -> None:
    g = BackendGrouper(window=60.0)
    g.observe_throttle("a.alpha.test", ADDR, 0.0)
    assert g.observe_throttle("b.beta.test", ADDR, 10.0) == KEY
    # Alone, 61 s after the last throttle of the group: no evidence of its own.
    assert g.observe_throttle("gamma.test", ADDR, 71.0) is None
    assert g.backend_for("gamma.test", now=71.0) is None
    assert g.backend_for("a.alpha.test", now=71.0) == KEY  # the pair is still held
    # Throttled again together with a member: now it has evidence of its own, and joins.
    assert g.observe_throttle("a.alpha.test", ADDR, 500.0) == KEY
    assert g.observe_throttle("gamma.test", ADDR, 530.0) == KEY
    assert g.groups(now=530.0) == {KEY: ["a.alpha.test", "b.beta.test", "gamma.test"]}


def test_grouper_group_dissolves_when_its_evidence_stops() -> None:
    g = BackendGrouper(window=60.0, hold=HOUR)
    g.observe_throttle("a.alpha.test", ADDR, 100.0)
    g.observe_throttle("b.beta.test", ADDR, 110.0)
    assert g.backend_for("a.alpha.test", now=110.0 + HOUR) == KEY  # held through the hour
    assert g.groups(now=110.0 + HOUR) == {KEY: ["a.alpha.test", "b.beta.test"]}
    assert g.backend_for("a.alpha.test", now=110.0 + HOUR + 1) is None
    assert g.backend_for("b.beta.test", now=110.0 + HOUR + 1) is None
    assert g.groups(now=110.0 + HOUR + 1) == {}


def test_grouper_one_domain_left_holding_is_no_group() -> None:
    """The key stands for a backend shared by several domains: when only one domain's evidence
    is still held, its hosts go back to their own keys."""
    g = BackendGrouper(window=60.0, hold=HOUR)
    g.observe_throttle("a.alpha.test", ADDR, 0.0)
    g.observe_throttle("b.beta.test", ADDR, 0.0)
    # Much later alpha is throttled together with gamma; beta's evidence runs out first.
    g.observe_throttle("a.alpha.test", ADDR, 3000.0)
    g.observe_throttle("c.gamma.test", ADDR, 3000.0)
    assert g.backend_for("a.alpha.test", now=HOUR + 1) == KEY  # alpha and gamma still held
    assert g.backend_for("b.beta.test", now=HOUR + 1) is None
    # Alpha grouped a second time (held two hours) with delta (held one): once delta's hour is
    # over, alpha alone still holds evidence, and one domain is no shared backend.
    g2 = BackendGrouper(window=60.0, hold=HOUR)
    g2.observe_throttle("a.alpha.test", ADDR, 0.0)
    g2.observe_throttle("c.gamma.test", ADDR, 0.0)
    g2.observe_throttle("a.alpha.test", ADDR, 2 * HOUR)
    g2.observe_throttle("d.delta.test", ADDR, 2 * HOUR)  # alpha held to 4 h, delta to 3 h
    assert g2.backend_for("a.alpha.test", now=3 * HOUR) == KEY
    assert g2.backend_for("d.delta.test", now=3 * HOUR + 1) is None
    assert g2.backend_for("a.alpha.test", now=3 * HOUR + 1) is None  # held, but alone
    assert g2.groups(now=3 * HOUR + 1) == {}


def test_grouper_hold_doubles_each_time_a_host_is_grouped_again() -> None:
    """A real shared backend stops throttling once we pace it as one, so its group runs out,
    we burst it, and it throttles together again: each regrouping holds twice as long (up to
    ``max_hold``), so it is burst ever more rarely. A coincidence is held an hour."""
    g = BackendGrouper(window=60.0, hold=HOUR, max_hold=4 * HOUR)
    hosts = ["news.alpha.test", "www.beta.test"]
    start = 0.0
    for hold in (HOUR, 2 * HOUR, 4 * HOUR, 4 * HOUR):
        for h in hosts:
            g.observe_throttle(h, ADDR, start)
        assert g.backend_for(hosts[0], now=start + hold) == KEY
        assert g.backend_for(hosts[0], now=start + hold + 1) is None
        start += hold + 100.0
    # Throttled together again while held: the same hold, counted from the new evidence.
    for h in hosts:
        g.observe_throttle(h, ADDR, start)
    for h in hosts:
        g.observe_throttle(h, ADDR, start + HOUR)
    assert g.backend_for(hosts[1], now=start + 5 * HOUR) == KEY
    assert g.backend_for(hosts[1], now=start + 5 * HOUR + 1) is None


def test_grouper_host_keeps_its_group_while_held_then_may_move() -> None:
    other = "198.51.100.9"
    g = BackendGrouper(window=60.0, hold=HOUR)
    g.observe_throttle("a.alpha.test", ADDR, 0.0)
    g.observe_throttle("b.beta.test", ADDR, 0.0)
    # Its name now resolves elsewhere, where it is throttled with another domain: still held.
    g.observe_throttle("x.other.test", other, 100.0)
    assert g.observe_throttle("a.alpha.test", other, 100.0) == KEY
    assert g.backend_for("x.other.test", now=100.0) is None  # other has one domain held
    # Once its hold is over, the same evidence moves it.
    g.observe_throttle("x.other.test", other, 2 * HOUR)
    assert g.observe_throttle("a.alpha.test", other, 2 * HOUR) == f"backend:addr:{other}"
    assert g.groups(now=2 * HOUR) == {f"backend:addr:{other}": ["a.alpha.test", "x.other.test"]}


def test_grouper_without_now_uses_the_latest_throttle_it_was_told_of() -> None:
    g = BackendGrouper(window=60.0, hold=HOUR)
    g.observe_throttle("a.alpha.test", ADDR, 0.0)
    g.observe_throttle("b.beta.test", ADDR, 0.0)
    assert g.backend_for("a.alpha.test") == KEY
    g.observe_throttle("elsewhere.test", "198.51.100.8", 2 * HOUR)  # time has passed
    assert g.backend_for("a.alpha.test") is None


# --- properties -------------------------------------------------------------------------------

_GROUP_HOSTS = ["a.alpha.test", "b.alpha.test", "news.beta.test", "gamma.test", "www.delta.test"]


@given(
    size=st.integers(min_value=2, max_value=len(_GROUP_HOSTS)),
    gaps=st.lists(st.floats(min_value=0.0, max_value=HOUR), min_size=1, max_size=12),
    # within the 60 s window with room for rounding (start + 60.0 - start can exceed 60.0)
    offsets=st.lists(st.floats(min_value=0.0, max_value=59.0), min_size=5, max_size=5),
    probe=st.floats(min_value=0.0, max_value=0.99),
)
def test_property_hosts_throttled_together_repeatedly_stay_grouped(
    size: int, gaps: list[float], offsets: list[float], probe: float
) -> None:
    """Hosts of several domains on one address, throttled together (within the window) again
    and again, never more than the hold apart: grouped after every round and in between, until
    the hold of the round's first throttle ends (each host's evidence is its own latest throttle:
    the first host's runs out up to a window before the last one's)."""
    hosts = _GROUP_HOSTS[:size]
    if len({registrable_domain(h) for h in hosts}) < 2:
        hosts = [*hosts, "news.beta.test"]
    g = BackendGrouper(window=60.0, hold=HOUR)
    start = 0.0
    for gap in gaps:
        start += gap + 60.0
        times = sorted(start + offsets[i % len(offsets)] for i in range(len(hosts)))
        for host, now in zip(hosts, times, strict=True):
            g.observe_throttle(host, ADDR, now)
        end = times[-1]
        assert {g.backend_for(h, now=end) for h in hosts} == {KEY}
        between = end + probe * (times[0] + HOUR - end)
        assert {g.backend_for(h, now=between) for h in hosts} == {KEY}


_ADDRS = {
    "198.51.100.7": ["a.alpha.test", "b.alpha.test", "beta.test", "gamma.test"],
    "198.51.100.8": ["delta.test", "www.epsilon.test"],
}
_HOST_ADDR = {h: a for a, hs in _ADDRS.items() for h in hs}
_EVENTS = st.lists(
    st.tuples(
        st.sampled_from(sorted(_HOST_ADDR)),
        st.one_of(
            st.floats(min_value=0.0, max_value=90.0), st.floats(min_value=0.0, max_value=3 * HOUR)
        ),
    ),
    max_size=40,
)


@given(events=_EVENTS)
def test_property_grouped_only_on_own_correlated_evidence(
    events: list[tuple[str, float]],
) -> None:
    """Random throttles over hosts on two addresses: a host has a backend only if it was
    throttled within the window of a throttle of another domain on its address, recently
    enough (the longest hold); and such a throttle groups it at once."""
    window, hold, max_hold = 60.0, HOUR, 8 * HOUR
    g = BackendGrouper(window=window, hold=hold, max_hold=max_hold)
    seen: list[tuple[float, str]] = []
    now = 0.0
    for host, gap in events:
        now += gap
        addr = _HOST_ADDR[host]
        got = g.observe_throttle(host, addr, now)
        seen.append((now, host))
        partners = [
            t
            for t, h in seen
            if _HOST_ADDR[h] == addr
            and registrable_domain(h) != registrable_domain(host)
            and now - t <= window
        ]
        if partners:
            assert got == f"backend:addr:{addr}"
        for h in _HOST_ADDR:
            key = g.backend_for(h, now=now)
            if key is None:
                continue
            assert key == f"backend:addr:{_HOST_ADDR[h]}"
            own = [t for t, x in seen if x == h]
            others = [
                t
                for t, x in seen
                if _HOST_ADDR[x] == _HOST_ADDR[h] and registrable_domain(x) != registrable_domain(h)
            ]
            # The pair completes when its later throttle arrives; the hold counts from the
            # throttle that completed the window, at most a window after the pair.
            assert any(
                abs(a - b) <= window and now - max(a, b) <= max_hold + window
                for a in own
                for b in others
            ), (h, seen)


@given(
    group=_EVENTS,
    loner_times=st.lists(st.floats(min_value=0.0, max_value=10 * HOUR), max_size=10),
)
def test_property_host_never_throttled_with_the_others_is_never_merged(
    group: list[tuple[str, float]], loner_times: list[float]
) -> None:
    """A host whose throttles all fall more than the window away from every other throttle on
    its address is never grouped, however many groups form around it."""
    window = 60.0
    loner = "lonely.test"
    events: list[tuple[float, str]] = []
    now = 0.0
    for host, gap in group:
        now += gap
        events.append((now, host))
    others = [t for t, h in events if _HOST_ADDR[h] == ADDR]
    for t in loner_times:
        if all(abs(t - o) > window for o in others):
            events.append((t, loner))
    events.sort()
    g = BackendGrouper(window=window)
    for t, host in events:
        got = g.observe_throttle(host, _HOST_ADDR.get(host, ADDR), t)
        if host == loner:
            assert got is None
        assert g.backend_for(loner, now=t) is None
    assert all(loner not in hosts for hosts in g.groups().values())
