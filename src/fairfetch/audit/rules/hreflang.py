"""hreflang: alternates that do not answer 200, missing return links, missing x-default."""

from __future__ import annotations

from collections.abc import Iterator

from fairfetch.audit.rules.base import Thresholds, rule
from fairfetch.audit.view import SiteView

Out = Iterator[tuple[str, str] | str]


@rule("hreflang-non-200", "hreflang", "error", "hreflang alternate is not a 200 page",
      explanation="An alternate language version points at a missing or redirecting URL.",
      fix="Point every hreflang at a live, canonical page.")
def hreflang_non200(site: SiteView, t: Thresholds) -> Out:
    for p in site.html_pages:
        for lang, href in p.hreflang:
            target = site.by_url.get(href)
            if target is not None and target.status != 200:
                why = target.status if target.status is not None else target.error
                yield p.url, f"{lang}: {href} ({why or 'no response'})"
            far = site.external_by_url.get(href) if target is None else None
            why = far.far_end() if far is not None else None
            if why is not None:
                yield p.url, f"{lang}: {href} ({why})"


@rule("hreflang-missing-return", "hreflang", "warning", "hreflang without return link",
      explanation="Alternates must point back at each other, or search engines ignore them.",
      fix="Add the reciprocal hreflang on the alternate page.")
def hreflang_missing_return(site: SiteView, t: Thresholds) -> Out:
    for p in site.html_pages:
        for lang, href in p.hreflang:
            if href == p.url:
                continue
            target = site.by_url.get(href)
            if target is None or target.status != 200:
                continue
            if not any(back == p.url for _, back in target.hreflang):
                yield p.url, f"{lang}: {href} does not link back"


@rule("hreflang-missing-x-default", "hreflang", "notice", "hreflang without x-default",
      explanation="x-default names the page for users whose language is not listed.",
      fix='Add <link rel="alternate" hreflang="x-default" href="...">.')
def hreflang_missing_x_default(site: SiteView, t: Thresholds) -> Out:
    for p in site.html_pages:
        if p.hreflang and not any(lang == "x-default" for lang, _ in p.hreflang):
            yield p.url
