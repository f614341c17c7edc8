"""A canonical or hreflang alternate naming one of the site's own URLs that got no HTTP answer
(the fetch failed, robots.txt disallows it) names a page no search engine can read: it is
canonical-to-non-200 / hreflang-non-200 with the reason, as the same URL on another site
with no answer already is, never silence nor a detail reading "(None)"."""

from __future__ import annotations

from fairfetch.audit.rules import run_rules

from .conftest import BASE, good_page, site

DEAD = "connection: refused"
BLOCKED = "robots: disallowed by robots.txt"


def _unanswered() -> tuple:
    dead = good_page("/dead", status=None, error=DEAD, content_type=None, indexable=False)
    blocked = good_page("/private", status=None, error=BLOCKED, content_type=None,
                        indexable=False)
    return dead, blocked


def test_audit_canonical_to_an_unanswered_page_is_non_200() -> None:
    dead, blocked = _unanswered()
    a = good_page("/a", canonical=dead.url, indexable=False)
    b = good_page("/b", canonical=blocked.url, indexable=False)
    found = [(f.url, f.detail) for f in run_rules(site(a, b, dead, blocked)).findings
             if f.rule_id == "canonical-to-non-200"]
    assert found == [(a.url, f"{dead.url} ({DEAD})"), (b.url, f"{blocked.url} ({BLOCKED})")]


def test_audit_hreflang_to_an_unanswered_page_names_why() -> None:
    dead, blocked = _unanswered()
    a = good_page("/a", hreflang=[("en", BASE + "/a"), ("fr", dead.url), ("de", blocked.url),
                                  ("x-default", BASE + "/a")])
    found = [f.detail for f in run_rules(site(a, dead, blocked)).findings
             if f.rule_id == "hreflang-non-200"]
    assert found == [f"fr: {dead.url} ({DEAD})", f"de: {blocked.url} ({BLOCKED})"]
