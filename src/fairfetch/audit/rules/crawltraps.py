"""Crawler traps: pages linking to internal URLs the crawl did not follow (audit/traps.py)."""

from __future__ import annotations

from collections.abc import Iterator

from fairfetch.audit.rules.base import Thresholds, rule
from fairfetch.audit.traps import describe
from fairfetch.audit.view import SiteView

Out = Iterator[tuple[str, str] | str]


@rule("link-to-crawler-trap", "indexability", "warning", "Link into a crawler trap",
      explanation="A page links (or redirects) to an internal URL that looks like an endless "
      "URL space: a path that repeats a segment (a broken relative link on a server that "
      "answers 200 for any path: /blog/blog/blog/...), a URL over the length limit, or one "
      "with too many query parameters. The audit did not crawl it, and search engines "
      "spend their crawl of your site on such URLs too.",
      fix="Make the link absolute (href=\"/blog/\", not \"blog/\"), answer 404 for paths that "
      "do not exist, and keep session ids and tracking parameters out of internal links. "
      "(The limits: docs/audit.md, Crawler traps.)")
def link_to_crawler_trap(site: SiteView, t: Thresholds) -> Out:
    for from_url, to_url, reason in site.trap_links:
        yield from_url, describe(to_url, reason, site.trap_limits)
