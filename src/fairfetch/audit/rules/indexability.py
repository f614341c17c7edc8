"""Indexability: what a search engine will not index, and pages it cannot find."""

from __future__ import annotations

from collections.abc import Iterator

from fairfetch.audit.indexability import has_noindex
from fairfetch.audit.rules.base import Thresholds, rule
from fairfetch.audit.view import SiteView

Out = Iterator[tuple[str, str] | str]


@rule("noindex-meta", "indexability", "warning", "Page has noindex in meta robots",
      explanation="A robots meta tag tells search engines not to index this page.",
      fix="Remove noindex from the robots meta tag if the page should appear in search.")
def noindex_meta(site: SiteView, t: Thresholds) -> Out:
    for p in site.html_pages:
        if has_noindex(p.meta_robots):
            yield p.url, p.meta_robots or ""


@rule("noindex-header", "indexability", "warning", "Page has noindex in X-Robots-Tag",
      explanation="The X-Robots-Tag response header forbids indexing; it is easy to miss "
      "because it is not in the HTML.",
      fix="Remove noindex from the X-Robots-Tag header in the server configuration.")
def noindex_header(site: SiteView, t: Thresholds) -> Out:
    for p in site.pages:
        if has_noindex(p.x_robots_tag):
            # Each header of its own, on one line: "otherbot: nofollow | noindex".
            yield p.url, (p.x_robots_tag or "").replace("\n", " | ")


@rule("blocked-by-robots", "indexability", "warning", "Internal URL blocked by robots.txt",
      explanation="robots.txt disallows crawling this URL, so search engines cannot read it.",
      fix="Allow the path in robots.txt, or stop linking to it if it is private.")
def blocked_by_robots(site: SiteView, t: Thresholds) -> Out:
    for p in site.pages:
        if (p.error or "").startswith("robots"):
            yield p.url


@rule("orphan-in-sitemap", "indexability", "warning",
      "Orphan page (in sitemap, linked from nowhere)",
      explanation="The sitemap lists this page but no crawled page links to it; search engines "
      "treat unlinked pages as unimportant.",
      fix="Link to the page from a relevant page, or remove it from the sitemap.",
      needs_full_graph=True)
def orphan_in_sitemap(site: SiteView, t: Thresholds) -> Out:
    for p in site.pages:
        if p.in_sitemap and p.url != site.start_url and not site.inlinks.get(p.url):
            yield p.url


@rule("too-deep", "indexability", "notice", "Page too many clicks from the start",
      explanation="Pages many clicks from the home page are crawled less often.",
      fix="Link to deep pages from higher up (hubs, navigation, related links).",
      needs_full_graph=True)
def too_deep(site: SiteView, t: Thresholds) -> Out:
    for p in site.pages:
        if p.depth is not None and p.depth > t.max_depth and p.is_html:
            yield p.url, f"depth {p.depth} > {t.max_depth}"


@rule("non-indexable-in-sitemap", "indexability", "warning", "Non-indexable URL in sitemap",
      explanation="A sitemap should list only canonical, indexable 200 pages.",
      fix="Remove redirects, errors, noindex and canonicalised pages from the sitemap.")
def non_indexable_in_sitemap(site: SiteView, t: Thresholds) -> Out:
    for p in site.pages:
        if p.in_sitemap and not p.indexable:
            yield p.url, p.indexability


@rule("canonicalised", "indexability", "notice", "Page canonicalised to another URL",
      explanation="The page names another URL as canonical, so it will not be indexed itself.",
      fix="Check that the canonical target is the intended version of the page.")
def canonicalised(site: SiteView, t: Thresholds) -> Out:
    for p in site.html_pages:
        if p.canonical and p.canonical != p.url:
            yield p.url, p.canonical


@rule("no-sitemap", "indexability", "notice", "No readable XML sitemap",
      explanation="No sitemap was found in robots.txt or at /sitemap.xml.",
      fix="Publish an XML sitemap and name it in robots.txt with a Sitemap: line.")
def no_sitemap(site: SiteView, t: Thresholds) -> Out:
    if site.pages and site.sitemaps_ok == 0:
        yield site.start_url


@rule("robots-txt-missing", "indexability", "notice", "robots.txt missing or unreadable",
      explanation="Without robots.txt crawlers assume everything may be crawled and find no "
      "sitemap hint.",
      fix="Serve /robots.txt (it may be empty) with a Sitemap: line.")
def robots_missing(site: SiteView, t: Thresholds) -> Out:
    if site.pages and site.robots_status != 200:
        yield site.start_url, f"status {site.robots_status}"


@rule("nofollow-internal-link", "indexability", "notice", "Internal link with rel=nofollow",
      explanation="nofollow on internal links stops authority flowing inside your own site.",
      fix="Remove rel=nofollow from links to your own pages.")
def nofollow_internal(site: SiteView, t: Thresholds) -> Out:
    yield from site.nofollow_internal


@rule("sitemap-url-not-crawled", "indexability", "notice", "Sitemap URL outside the crawl",
      explanation="The sitemap lists a URL that is outside the audited site or was never "
      "reached.",
      fix="List only URLs of this site that exist and are indexable.",
      needs_full_graph=True)
def sitemap_url_not_crawled(site: SiteView, t: Thresholds) -> Out:
    for url in sorted(site.sitemap_urls):
        if url not in site.by_url:
            yield url
