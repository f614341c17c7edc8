"""A relative pager link on a soft-404 site (found by the second review, fixed after it).

WordPress-style themes link the next page relatively (href="page/3/"); on a server answering 200
for any path, /blog/page/2/ links /blog/page/2/page/3/, then /blog/page/2/page/3/page/4/, ...
No segment or run of segments repeated three times in a row (("page", "2"), ("page", "3")
differ), so repeated_path_segment never fired; only url_too_long did, ~250 hops later at 2,000
characters: ~250 pages spent on the spiral. A run holding a word now also repeats when only its
numbers differ ("page/N"); numbers alone never do (a date path), and words must repeat as they
are (faceted paths /tag/a/tag/b/tag/c stay followed)."""

from __future__ import annotations

from fairfetch.audit.traps import TrapLimits, trap_reason
from fairfetch.audit.urls import resolve_link

S = "http://site.test"


def test_review_s11b_a_relative_pager_spiral_is_cut_within_a_few_hops() -> None:
    url = S + "/blog/page/2/"
    hops = 0
    n = 3
    while trap_reason(url, TrapLimits()) is None and hops < 50:
        url = resolve_link(url, f"page/{n}/") or ""
        n += 1
        hops += 1
    assert hops <= 5, f"followed {hops} hops: {url}"


def test_review_s11b_faceted_paths_stay_followed() -> None:
    for path in ("/tag/a/tag/b/tag/c", "/color/red/size/9/color/blue", "/2026/12/01/page/2",
                 "/2026/12/01/", "/a/1/b/2/c/3", "/page/2/page/3/"):
        assert trap_reason(S + path, TrapLimits()) is None
