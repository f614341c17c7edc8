"""Robots directives (meta robots, X-Robots-Tag): which of them forbid indexing.

``none`` is a directive of its own (noindex, nofollow), but it is also a value: Google's
``max-image-preview:none`` only says "no large image preview" and the page stays indexed. A
directive's value is not a directive, with or without a user-agent prefix.
"""

from __future__ import annotations

import pytest

from fairfetch.audit.indexability import has_noindex, indexability
from fairfetch.audit.rules import run_rules

from .conftest import good_page, site

FORBID = [
    "noindex", "NOINDEX", "none", "noindex, nofollow", "nofollow, noindex", "index; noindex",
    "googlebot: noindex", "googlebot: none", "GoogleBot : noindex", "googlebot: nofollow, noindex",
    "max-image-preview:none, noindex", "googlebot: max-snippet:-1, noindex",
]  # fmt: skip
ALLOW = [
    "", "all", "index, follow", "nofollow", "max-image-preview:none",
    "max-image-preview: none", "googlebot: max-image-preview:none", "max-snippet:0",
    "max-video-preview:-1", "max-image-preview:large, max-snippet:-1",
    "unavailable_after: 25 Jun 2010 15:00:00 PST", "googlebot: unavailable_after: 2030-01-01",
    "bingbot: max-image-preview:none, nofollow",
]  # fmt: skip


@pytest.mark.parametrize("directives", FORBID)
def test_audit_robots_directive_forbids_indexing(directives: str) -> None:
    assert has_noindex(directives)


@pytest.mark.parametrize("directives", ALLOW)
def test_audit_robots_directive_value_none_is_not_noindex(directives: str) -> None:
    assert not has_noindex(directives)


def test_audit_max_image_preview_none_keeps_the_page_indexable_and_unflagged() -> None:
    url = "https://site.test/a"
    for field in ("meta_robots", "x_robots_tag"):
        verdict = indexability(
            url=url, status=200, error=None, content_type="text/html",
            **{"meta_robots": None, "x_robots_tag": None, field: "max-image-preview:none"},
            canonical=url,
        )  # fmt: skip
        assert verdict == (True, "indexable")
    page = good_page("/a", meta_robots="max-image-preview:none",
                     x_robots_tag="googlebot: max-image-preview:none")
    fired = {f.rule_id for f in run_rules(site(page)).findings}
    assert not fired & {"noindex-meta", "noindex-header"}
    # ...while a real noindex next to it still fires.
    noindex = good_page("/b", meta_robots="max-image-preview:none, noindex")
    assert [f.url for f in run_rules(site(noindex)).findings if f.rule_id == "noindex-meta"] == [
        noindex.url
    ]


#: X-Robots-Tag may name the crawler a list of directives is for ("otherbot: noindex,
#: nofollow", Google's own example): the agent applies to the directives after it until another
#: agent is named, and directives without one are for every crawler. The audit reads a page as
#: Google does (meta name="robots" or "googlebot"): another crawler's noindex is not its.
OTHER_AGENT_ONLY = [
    "otherbot: noindex", "otherbot: noindex, nofollow", "otherbot: nofollow, noindex",
    "bingbot: none", "otherbot: noindex, googlebot: nofollow",
    "googlebot: nofollow, otherbot: noindex", "Other-Bot : NOINDEX, NOFOLLOW",
    # Two X-Robots-Tag headers, as the fetch engine joins them.
    "googlebot: nofollow, otherbot: noindex, nofollow",
]  # fmt: skip
FOR_US_TOO = [
    "otherbot: nofollow, googlebot: noindex", "otherbot: nofollow, googlebot: none",
    "noindex, otherbot: nofollow", "googlebot: noindex, otherbot: nofollow",
    # A date's comma is no agent: the directive after it is still for every crawler.
    "unavailable_after: Wednesday, 03-Nov-2027 15:00:00 PST, noindex",
]  # fmt: skip


@pytest.mark.parametrize("directives", OTHER_AGENT_ONLY)
def test_audit_x_robots_tag_for_another_crawler_keeps_the_page_indexable(
    directives: str,
) -> None:
    assert not has_noindex(directives)
    url = "https://site.test/a"
    verdict = indexability(
        url=url, status=200, error=None, content_type="text/html", meta_robots=None,
        x_robots_tag=directives, canonical=url,
    )  # fmt: skip
    assert verdict == (True, "indexable")
    page = good_page("/a", x_robots_tag=directives)
    fired = {f.rule_id for f in run_rules(site(page)).findings}
    assert "noindex-header" not in fired


@pytest.mark.parametrize("directives", FOR_US_TOO)
def test_audit_x_robots_tag_noindex_for_google_or_everyone_still_counts(directives: str) -> None:
    assert has_noindex(directives)
    page = good_page("/a", x_robots_tag=directives)
    assert [f.url for f in run_rules(site(page)).findings if f.rule_id == "noindex-header"] == [
        page.url
    ]


def test_audit_x_robots_tag_each_header_names_its_own_crawler() -> None:
    """Two X-Robots-Tag headers: the fetch engine keeps them apart (a line each), and an agent
    named in the first does not reach the second ("otherbot: nofollow" then "noindex": the
    page is noindex for every crawler, Google included)."""
    assert has_noindex("otherbot: nofollow\nnoindex")
    assert has_noindex("otherbot: nofollow\ngooglebot: noindex")
    assert not has_noindex("noindex: x\notherbot: noindex")  # not a directive, then another's
    assert not has_noindex("googlebot: nofollow\notherbot: noindex")
    page = good_page("/a", x_robots_tag="otherbot: nofollow\nnoindex")
    found = [f for f in run_rules(site(page)).findings if f.rule_id == "noindex-header"]
    assert [(f.url, f.detail) for f in found] == [(page.url, "otherbot: nofollow | noindex")]
