"""Titles and meta descriptions: missing, duplicate, too long (characters and pixels), short."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from fairfetch.audit.rules.base import Thresholds, rule
from fairfetch.audit.rules.pixels import text_width_px
from fairfetch.audit.view import PageRow, SiteView

Out = Iterator[tuple[str, str] | str]
TITLE_PX = 20.0
DESCRIPTION_PX = 14.0


def _indexable_html(site: SiteView) -> list[PageRow]:
    return [p for p in site.html_pages if p.indexable]


def _duplicates(pages: list[PageRow], key: str) -> Out:
    groups: dict[str, list[str]] = defaultdict(list)
    for p in pages:
        value = getattr(p, key)
        if value:
            groups[value.strip().lower()].append(p.url)
    for urls in groups.values():
        if len(urls) > 1:
            for url in urls:
                yield url, f"shared by {len(urls)} pages"


@rule("title-missing", "titles", "error", "Title missing or empty",
      explanation="Search engines show the title as the headline of the result.",
      fix="Give every page a unique, descriptive <title>.")
def title_missing(site: SiteView, t: Thresholds) -> Out:
    for p in site.html_pages:
        if not (p.title or "").strip():
            yield p.url


@rule("title-duplicate", "titles", "warning", "Duplicate title",
      explanation="Several indexable pages share one title, so they compete with each other.",
      fix="Write a title that says what is unique about each page.")
def title_duplicate(site: SiteView, t: Thresholds) -> Out:
    yield from _duplicates(_indexable_html(site), "title")


@rule("title-too-long", "titles", "warning", "Title too long (characters)",
      explanation="Long titles are cut off in search results.",
      fix="Keep titles under the configured number of characters.")
def title_too_long(site: SiteView, t: Thresholds) -> Out:
    for p in site.html_pages:
        if p.title and len(p.title) > t.title_max_chars:
            yield p.url, f"{len(p.title)} chars"


@rule("title-too-wide", "titles", "warning", "Title too long (pixel width)",
      explanation="Search engines truncate by rendered width; wide letters run out first.",
      fix="Shorten the title or use narrower wording.")
def title_too_wide(site: SiteView, t: Thresholds) -> Out:
    for p in site.html_pages:
        if p.title:
            px = text_width_px(p.title, TITLE_PX)
            if px > t.title_max_px:
                yield p.url, f"{px} px"


@rule("title-too-short", "titles", "notice", "Title too short",
      explanation="A very short title wastes the most visible line of the result.",
      fix="Describe the page in the title.")
def title_too_short(site: SiteView, t: Thresholds) -> Out:
    for p in site.html_pages:
        if p.title and len(p.title.strip()) < t.title_min_chars:
            yield p.url, f"{len(p.title.strip())} chars"


@rule("title-same-as-h1", "titles", "notice", "Title same as h1",
      explanation="Title and h1 can carry different wording and cover more queries.",
      fix="Vary the title and the main heading.")
def title_same_as_h1(site: SiteView, t: Thresholds) -> Out:
    for p in site.html_pages:
        if p.title and p.h1 and p.title.strip().lower() == p.h1[0].strip().lower():
            yield p.url


@rule("title-outside-head", "titles", "warning", "Title outside <head>",
      explanation="A <title> in the body is ignored by search engines.",
      fix="Move the <title> element into <head>.")
def title_outside_head(site: SiteView, t: Thresholds) -> Out:
    for p in site.html_pages:
        if p.title_outside_head:
            yield p.url


@rule("title-multiple", "titles", "warning", "Multiple titles",
      explanation="Only one title is used; which one is up to the search engine.",
      fix="Keep a single <title>.")
def title_multiple(site: SiteView, t: Thresholds) -> Out:
    for p in site.html_pages:
        if (p.title_count or 0) > 1:
            yield p.url, f"{p.title_count} titles"


@rule("description-missing", "titles", "warning", "Meta description missing",
      explanation="Without one the search engine picks a snippet of its own.",
      fix="Write a meta description summarising the page.")
def description_missing(site: SiteView, t: Thresholds) -> Out:
    for p in site.html_pages:
        if not (p.meta_description or "").strip():
            yield p.url


@rule("description-duplicate", "titles", "notice", "Duplicate meta description",
      explanation="The same description on many pages tells searchers nothing.",
      fix="Write a description per page.")
def description_duplicate(site: SiteView, t: Thresholds) -> Out:
    yield from _duplicates(_indexable_html(site), "meta_description")


@rule("description-too-long", "titles", "notice", "Meta description too long (characters)",
      explanation="Long descriptions are cut off.",
      fix="Keep descriptions under the configured number of characters.")
def description_too_long(site: SiteView, t: Thresholds) -> Out:
    for p in site.html_pages:
        if p.meta_description and len(p.meta_description) > t.description_max_chars:
            yield p.url, f"{len(p.meta_description)} chars"


@rule("description-too-wide", "titles", "notice", "Meta description too long (pixel width)",
      explanation="Snippets are truncated by rendered width.",
      fix="Shorten the description.")
def description_too_wide(site: SiteView, t: Thresholds) -> Out:
    for p in site.html_pages:
        if p.meta_description:
            px = text_width_px(p.meta_description, DESCRIPTION_PX)
            if px > t.description_max_px:
                yield p.url, f"{px} px"


@rule("description-too-short", "titles", "notice", "Meta description too short",
      explanation="A short description leaves the snippet to the search engine.",
      fix="Write one or two full sentences.")
def description_too_short(site: SiteView, t: Thresholds) -> Out:
    for p in site.html_pages:
        d = (p.meta_description or "").strip()
        if d and len(d) < t.description_min_chars:
            yield p.url, f"{len(d)} chars"


@rule("description-outside-head", "titles", "warning", "Meta description outside <head>",
      explanation="A meta description in the body is ignored.",
      fix="Move it into <head>.")
def description_outside_head(site: SiteView, t: Thresholds) -> Out:
    for p in site.html_pages:
        if p.description_outside_head:
            yield p.url


@rule("description-multiple", "titles", "notice", "Multiple meta descriptions",
      explanation="Only one is used.",
      fix="Keep a single meta description.")
def description_multiple(site: SiteView, t: Thresholds) -> Out:
    for p in site.html_pages:
        if (p.description_count or 0) > 1:
            yield p.url, f"{p.description_count} descriptions"
