"""Headings: missing or multiple h1, duplicate h1, skipped levels."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from fairfetch.audit.rules.base import Thresholds, rule
from fairfetch.audit.view import SiteView

Out = Iterator[tuple[str, str] | str]


@rule("h1-missing", "headings", "warning", "h1 missing",
      explanation="The h1 says what the page is about, to readers and to search engines.",
      fix="Add one h1 with the page's main topic.")
def h1_missing(site: SiteView, t: Thresholds) -> Out:
    for p in site.html_pages:
        if not any(h.strip() for h in p.h1):
            yield p.url


@rule("h1-multiple", "headings", "notice", "Multiple h1",
      explanation="Several h1 dilute what the page is about.",
      fix="Keep one h1; demote the others to h2.")
def h1_multiple(site: SiteView, t: Thresholds) -> Out:
    for p in site.html_pages:
        if len(p.h1) > 1:
            yield p.url, f"{len(p.h1)} h1"


@rule("h1-duplicate", "headings", "notice", "Duplicate h1",
      explanation="Several indexable pages share one main heading.",
      fix="Make each page's h1 specific.")
def h1_duplicate(site: SiteView, t: Thresholds) -> Out:
    groups: dict[str, list[str]] = defaultdict(list)
    for p in site.html_pages:
        if p.indexable and p.h1 and p.h1[0].strip():
            groups[p.h1[0].strip().lower()].append(p.url)
    for urls in groups.values():
        if len(urls) > 1:
            for url in urls:
                yield url, f"shared by {len(urls)} pages"


@rule("heading-levels-skipped", "headings", "notice", "Heading levels skipped",
      explanation="Going from h1 to h4 breaks the outline screen readers navigate by.",
      fix="Nest headings one level at a time.")
def heading_skipped(site: SiteView, t: Thresholds) -> Out:
    for p in site.html_pages:
        prev = 0
        for ch in p.heading_levels:
            level = int(ch)
            if level > prev + 1:
                yield p.url, f"h{prev or '-'} -> h{level}"
                break
            prev = level
