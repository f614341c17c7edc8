"""The window totals: settled minutes plus fresh ones give the same figures as counting all."""

from __future__ import annotations

from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from fairfetch.web.stats import _Totals, _window, outcome_label

keys = st.sampled_from([f"k{i}" for i in range(12)])
counters = st.dictionaries(keys, st.integers(1, 50), max_size=12)


@given(counters, counters, st.integers(1, 5))
def test_web_window_top_keys_equal_a_full_merge(base_t, recent_t, top) -> None:
    base, recent = _Totals(), _Totals()
    base.throttles.update(base_t)
    base.counts.update({"ok": 3})
    recent.throttles.update(recent_t)
    recent.counts.update({"ok": 1, "error:dns": 2})
    base.top_throttles(top)  # cached before the merge, as a settled window is
    out = _window(base, recent, top=top)
    full = Counter(base_t) + Counter(recent_t)
    expected = sorted(full.items(), key=lambda kv: (-kv[1], kv[0]))[:top]
    assert [(d["key"], d["throttles"]) for d in out["throttles_by_key"]] == expected
    assert out["crawls"] == {"error:dns": 2, "ok": 4}
    assert out["total"] == 6


def test_web_outcome_labels() -> None:
    assert outcome_label("error", "dns") == "error:dns"
    assert outcome_label("error", None) == "error"
    assert outcome_label("throttled", None) == "throttled"
