"""Content: thin pages, exact and near duplicates, missing language."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from fairfetch.audit.rules.base import Thresholds, rule
from fairfetch.audit.sketch import sketch_similarity
from fairfetch.audit.view import SiteView

Out = Iterator[tuple[str, str] | str]
_MAX_POSTING = 20  # a shingle shared by more pages than this is template, not content
_KEY_HASHES = 6


@rule("thin-content", "content", "warning", "Thin content",
      explanation="Few words outside navigation and boilerplate: little for a search engine "
      "to rank.",
      fix="Expand the page or merge it into a fuller one.")
def thin_content(site: SiteView, t: Thresholds) -> Out:
    for p in site.html_pages:
        if p.indexable and (p.word_count or 0) < t.thin_words:
            yield p.url, f"{p.word_count} words"


@rule("duplicate-content", "content", "error", "Exact duplicate content",
      explanation="Several indexable pages have the same main text (same body hash).",
      fix="Keep one page and canonicalise or redirect the others to it.")
def duplicate_content(site: SiteView, t: Thresholds) -> Out:
    groups: dict[str, list[str]] = defaultdict(list)
    # Indexable pages only (as for titles): a copy canonicalised to the original, or noindex,
    # is the fix this rule asks for, not a duplicate left to fix.
    for p in site.html_pages:
        if p.content_hash and p.word_count and p.indexable:
            groups[p.content_hash].append(p.url)
    for urls in groups.values():
        if len(urls) > 1:
            for url in urls:
                yield url, f"same text as {len(urls) - 1} other page(s)"


@rule("near-duplicate-content", "content", "warning", "Near-duplicate content",
      explanation="The main text is almost the same as another indexable page's (MinHash "
      "estimate).",
      fix="Differentiate the pages or consolidate them.")
def near_duplicate(site: SiteView, t: Thresholds) -> Out:
    # Candidates share at least two of their few smallest shingle hashes (near duplicates share
    # most of them); only candidates get the full similarity estimate. Hashes shared by many
    # pages are template, not content, and make no candidates.
    pages = [p for p in site.html_pages if p.sketch and p.indexable]  # as duplicate-content
    postings: dict[str, list[int]] = defaultdict(list)
    for i, p in enumerate(pages):
        for h in (p.sketch or "").split()[:_KEY_HASHES]:
            postings[h].append(i)
    pairs: dict[tuple[int, int], int] = defaultdict(int)
    for ids in postings.values():
        if len(ids) < 2 or len(ids) > _MAX_POSTING:
            continue
        for a in range(len(ids)):
            for b in range(a + 1, len(ids)):
                pairs[(ids[a], ids[b])] += 1
    flagged: dict[int, str] = {}
    for (a, b), shared in sorted(pairs.items()):
        if shared < 2:
            continue
        pa, pb = pages[a], pages[b]
        if pa.content_hash == pb.content_hash:
            continue  # exact duplicates are the other rule's
        sim = sketch_similarity(pa.sketch or "", pb.sketch or "")
        if sim >= t.near_duplicate_similarity:
            flagged.setdefault(a, f"{sim:.0%} like {pb.url}")
            flagged.setdefault(b, f"{sim:.0%} like {pa.url}")
    for i in sorted(flagged):
        yield pages[i].url, flagged[i]


@rule("lang-missing", "content", "notice", "Language not declared",
      explanation="<html lang> tells browsers, screen readers and search engines the language.",
      fix="Add lang to the <html> element.")
def lang_missing(site: SiteView, t: Thresholds) -> Out:
    for p in site.html_pages:
        if not (p.lang or "").strip():
            yield p.url
