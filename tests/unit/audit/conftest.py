"""Builders for hand-made site views: a page that passes every rule, changed one field at a time."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fairfetch.audit.crawlfile import CrawlFile
from fairfetch.audit.pagerows import Fetched, PageRowBuilder
from fairfetch.audit.urls import Scope
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


def crawl_file_of(
    path: Path, start: str, fetched: Sequence[Fetched], *, finished: bool = True
) -> CrawlFile:
    """A crawl file written from these answers as a crawl writes it (the row builder, then the
    writer's batch): the first answer is the start page at depth 0, every other at depth 1.
    ``finished=False`` leaves it as an interrupted crawl does (no finalize, no links_to)."""
    cf = CrawlFile(path)
    builder = PageRowBuilder(Scope(start), {}, {})
    ops: list[tuple[str, object]] = [
        ("queue", (i, f.url, min(i - 1, 1), min(i - 1, 1), "link"))
        for i, f in enumerate(fetched, 1)
    ]
    for i, f in enumerate(fetched, 1):
        ops.extend(builder.build(i, f).ops)
    cf.write_batch(ops)
    if finished:
        cf.finalize()
        cf.set_meta(start_url=start, finished_at="2026-11-30T00:00:00+00:00", cut_short="")
    else:
        cf.set_meta(start_url=start, cut_short="")
    return cf
