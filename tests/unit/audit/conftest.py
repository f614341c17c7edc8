"""Builders for hand-made site views: a page that passes every rule, changed one field at a time."""

from __future__ import annotations

from typing import Any

from fairfetch.audit.view import PageRow, SiteView

BASE = "https://site.test"


def good_page(path: str, **changes: Any) -> PageRow:
    url = BASE + path
    slug = path.strip("/").replace("/", " ") or "home"
    values: dict[str, Any] = dict(
        url=url, status=200, depth=1, content_type="text/html; charset=utf-8", size=20_000,
        response_ms=50.0, title=f"The {slug} page of a site that passes every rule",
        title_count=1, meta_description=(
            f"Everything about {slug}: a description long enough to be useful, short enough "
            "to fit the snippet."
        ), description_count=1, h1=[f"All about {slug}"], heading_levels="122",
        canonical=url, canonical_count=1, lang="en", word_count=600, indexable=True,
        indexability="indexable", content_hash=f"hash-{slug}", sketch="", og_title="t",
        og_image="/i.png", jsonld_total=1, jsonld_invalid=0, hsts=True, csp=True,
        x_content_type_options=True, mixed_content=0, in_sitemap=True,
    )  # fmt: skip
    values.update(changes)
    return PageRow(**values)


def site(*pages: PageRow, **fields: Any) -> SiteView:
    """A view whose pages all link to each other (no orphans) unless ``inlinks`` is given."""
    fields.setdefault("start_url", BASE + "/")
    fields.setdefault("inlinks", {p.url: 1 for p in pages})
    fields.setdefault("sitemap_urls", {p.url for p in pages if p.in_sitemap})
    fields.setdefault("sitemaps_ok", 1)
    return SiteView(pages=list(pages), **fields)
