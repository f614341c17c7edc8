"""Structured data and social tags: invalid JSON-LD, missing Open Graph title and image."""

from __future__ import annotations

from collections.abc import Iterator

from fairfetch.audit.rules.base import Thresholds, rule
from fairfetch.audit.view import SiteView

Out = Iterator[tuple[str, str] | str]


@rule("jsonld-invalid", "structured", "error", "Invalid JSON-LD",
      explanation="A JSON-LD block does not parse, so its structured data is lost.",
      fix="Validate the JSON (trailing commas, quotes) in the ld+json script.")
def jsonld_invalid(site: SiteView, t: Thresholds) -> Out:
    for p in site.html_pages:
        if p.jsonld_invalid:
            yield p.url, f"{p.jsonld_invalid} of {p.jsonld_total} blocks"


@rule("og-title-missing", "structured", "notice", "og:title missing",
      explanation="Social networks use og:title for link previews.",
      fix='Add <meta property="og:title" content="...">.')
def og_title_missing(site: SiteView, t: Thresholds) -> Out:
    for p in site.html_pages:
        if p.indexable and not p.og_title:
            yield p.url


@rule("og-image-missing", "structured", "notice", "og:image missing",
      explanation="Link previews without an image get far fewer clicks.",
      fix='Add <meta property="og:image" content="...">.')
def og_image_missing(site: SiteView, t: Thresholds) -> Out:
    for p in site.html_pages:
        if p.indexable and not p.og_image:
            yield p.url
