"""Canonicals: missing, multiple, pointing at a non-200, a redirect or a page that is not
indexable itself."""

from __future__ import annotations

from collections.abc import Iterator

from fairfetch.audit.rules.base import Thresholds, rule
from fairfetch.audit.view import SiteView

Out = Iterator[tuple[str, str] | str]


@rule("canonical-missing", "canonicals", "notice", "Canonical missing",
      explanation="Without a canonical, URL variants (parameters, slashes) can split signals.",
      fix="Add <link rel=canonical> naming the page's preferred URL.")
def canonical_missing(site: SiteView, t: Thresholds) -> Out:
    for p in site.html_pages:
        if not p.canonical:
            yield p.url


@rule("canonical-multiple", "canonicals", "warning", "Multiple canonicals",
      explanation="Conflicting canonicals are ignored altogether.",
      fix="Keep exactly one canonical link.")
def canonical_multiple(site: SiteView, t: Thresholds) -> Out:
    for p in site.html_pages:
        if (p.canonical_count or 0) > 1:
            yield p.url, f"{p.canonical_count} canonicals"


@rule("canonical-to-non-200", "canonicals", "error", "Canonical points to a non-200 URL",
      explanation="The canonical target is an error page, so the page names a dead URL as "
      "its preferred version.",
      fix="Point the canonical at a live page (usually the page itself).")
def canonical_non200(site: SiteView, t: Thresholds) -> Out:
    for p in site.html_pages:
        target = site.by_url.get(p.canonical or "")
        if target is not None and target.status is not None and target.status >= 400:
            yield p.url, f"{p.canonical} ({target.status})"
        elif target is not None and target.status is None:
            # No answer (the fetch failed, robots.txt disallows it): no page to index either.
            yield p.url, f"{p.canonical} ({target.error or 'no response'})"
        far = site.external_by_url.get(p.canonical or "") if target is None else None
        why = far.far_end() if far is not None else None
        if why is not None and not why.startswith("redirects to"):
            yield p.url, f"{p.canonical} ({why})"


@rule("canonical-to-redirect", "canonicals", "warning", "Canonical points to a redirect",
      explanation="The canonical target redirects elsewhere; search engines may ignore it.",
      fix="Point the canonical at the final URL.")
def canonical_redirect(site: SiteView, t: Thresholds) -> Out:
    for p in site.html_pages:
        target = site.by_url.get(p.canonical or "")
        if target is not None and target.status is not None and 300 <= target.status < 400:
            yield p.url, f"{p.canonical} ({target.status})"
        far = site.external_by_url.get(p.canonical or "") if target is None else None
        why = far.far_end() if far is not None else None
        if why is not None and why.startswith("redirects to"):
            yield p.url, f"{p.canonical} ({why})"


@rule("canonical-to-non-indexable", "canonicals", "error",
      "Canonical points to a page that is not indexable",
      explanation="The canonical target answers 200 but is not indexable itself (noindex, or "
      "it names yet another canonical: a chain): the page names as its preferred version a "
      "URL search engines are told not to index, and both may drop out.",
      fix="Point the canonical at the final, indexable URL (or lift the target's noindex).")
def canonical_non_indexable(site: SiteView, t: Thresholds) -> Out:
    for p in site.html_pages:
        if not p.canonical or p.canonical == p.url:
            continue
        target = site.by_url.get(p.canonical)
        if target is None or target.status != 200 or target.indexable or not target.is_html:
            continue
        why = target.indexability or "not indexable"
        if target.canonical and target.canonical != target.url:
            why = f"{why}: to {target.canonical}"
        yield p.url, f"{p.canonical} ({why})"
