"""Our outage, as a pure detector: when it starts, and what does (and does not) end it.

Before: one success from anywhere ended an outage. During a partial outage of our side (our
resolver failing while a few keys on kept-alive connections still answer) that single success
cleared it, and the next network failures counted against healthy feeds again. Now an outage
ends only when enough distinct keys answer (``recover_keys``) and they outnumber the keys still
failing in the window; during an outage only a few probes go out, one per key per window.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from fairfetch.crawl.outage import OutageDetector

T = 1000.0


def in_outage(n_keys: int = 20, **kw: float) -> OutageDetector:
    d = OutageDetector(threshold_keys=20, window=60.0, **kw)  # type: ignore[arg-type]
    for i in range(n_keys):
        d.observe_network_failure(f"down{i}", T)
    assert d.in_outage
    return d


def test_many_distinct_keys_failing_is_an_outage_and_few_are_not() -> None:
    d = OutageDetector(threshold_keys=20, window=60.0)
    for i in range(19):
        assert not d.observe_network_failure(f"k{i}", T)
    for _ in range(50):  # the same keys again: still 19 distinct
        assert not d.observe_network_failure("k3", T + 1)
    assert d.observe_network_failure("k19", T + 2)


def test_failures_outside_the_window_do_not_add_up() -> None:
    d = OutageDetector(threshold_keys=20, window=60.0)
    for i in range(19):
        d.observe_network_failure(f"k{i}", T)
    assert not d.observe_network_failure("k19", T + 61)


def test_one_success_does_not_end_an_outage() -> None:
    d = in_outage()
    d.observe_success("alive", T + 1)
    assert d.in_outage


def test_a_few_kept_alive_keys_answering_again_and_again_do_not_end_it() -> None:
    d = in_outage()
    for step in range(200):
        d.observe_success(f"alive{step % 4}", T + step * 0.5)
        d.observe_network_failure(f"down{step % 20}", T + step * 0.5)
        assert d.in_outage


def test_many_keys_answering_while_more_keys_still_fail_do_not_end_it() -> None:
    d = in_outage(30)
    for i in range(10):
        d.observe_success(f"alive{i}", T + 1)
    assert d.in_outage  # 10 answering, 30 failing in the window


def test_a_real_recovery_ends_it() -> None:
    d = in_outage()
    later = T + 61  # the failures have left the window
    for i in range(d.recover_keys - 1):
        d.observe_success(f"k{i}", later)
        assert d.in_outage
    d.observe_success("last", later)
    assert not d.in_outage


def test_a_recovery_inside_the_window_needs_a_majority_of_keys() -> None:
    d = in_outage(20)
    for i in range(20):
        d.observe_success(f"down{i}", T + 5)  # the failing keys themselves answer again
    assert not d.in_outage


def test_the_network_is_fine_only_with_evidence_from_several_keys() -> None:
    d = OutageDetector(threshold_keys=20, window=60.0)
    for i in range(8):
        d.observe_network_failure(f"down{i}", T)
    d.observe_success("alive", T)
    assert not d.network_fine(T)  # one answering key says nothing about the other eight
    for i in range(9):
        d.observe_success(f"alive{i}", T)
    assert d.network_fine(T)


def test_during_an_outage_only_a_few_probes_go_out_one_per_key_per_window() -> None:
    d = in_outage()
    granted = [k for k in (f"p{i % 40}" for i in range(200)) if d.may_probe(k, T + 1)]
    assert len(granted) == d.probe_keys
    assert len(set(granted)) == len(granted)
    assert not d.may_probe("p0", T + 2)
    assert d.may_probe("p0", T + 62)  # a new window


def test_outside_an_outage_every_fetch_goes() -> None:
    d = OutageDetector()
    assert all(d.may_probe(f"k{i % 3}", T) for i in range(100))


events = st.lists(
    st.tuples(st.booleans(), st.integers(0, 30), st.floats(0, 30)),
    max_size=300,
)


@given(events=events, recover=st.integers(1, 8), threshold=st.integers(1, 25))
def test_an_outage_ends_only_on_evidence_from_recover_keys_distinct_keys(
    events: list[tuple[bool, int, float]], recover: int, threshold: int
) -> None:
    d = OutageDetector(threshold_keys=threshold, window=60.0, recover_keys=recover)
    now = T
    latest: dict[str, tuple[bool, float]] = {}
    for ok, key_no, dt in events:
        now += dt
        key = f"k{key_no}"
        was = d.in_outage
        if ok:
            d.observe_success(key, now)
        else:
            d.observe_network_failure(key, now)
        latest[key] = (ok, now)
        recent = {k: v for k, v in latest.items() if v[1] >= now - 60.0}
        answering = sum(1 for ok_, _ in recent.values() if ok_)
        failing = len(recent) - answering
        if was and not d.in_outage:
            # Ended: only by a success, with enough distinct answering keys, outnumbering
            # the failing ones.
            assert ok
            assert answering >= min(recover, threshold)
            assert answering > failing
        if not was and d.in_outage:
            # Started: only by a failure, with threshold distinct failing keys.
            assert not ok
            assert failing >= threshold
        if not ok:
            assert was <= d.in_outage  # a failure never ends an outage
