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
_LEADERS = 3  # pages of a large band the others are compared with


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
    # Each page's key hashes, kept for the bands below: one string object per distinct hash
    # (a site's pages share most of theirs), a tuple per page.
    canon: dict[str, str] = {}
    keys = [
        tuple(canon.setdefault(h, h) for h in (p.sketch or "").split()[:_KEY_HASHES])
        for p in pages
    ]
    del canon
    postings: dict[str, list[int]] = defaultdict(list)
    for i, hs in enumerate(keys):
        for h in hs:
            postings[h].append(i)
    pairs: dict[tuple[int, int], int] = defaultdict(int)
    for ids in postings.values():
        if len(ids) < 2 or len(ids) > _MAX_POSTING:
            continue
        for a in range(len(ids)):
            for b in range(a + 1, len(ids)):
                pairs[(ids[a], ids[b])] += 1
    flagged: dict[int, str] = {}

    def judge(a: int, b: int) -> bool:
        pa, pb = pages[a], pages[b]
        if pa.content_hash == pb.content_hash:
            return False  # exact duplicates are the other rule's
        sim = sketch_similarity(pa.sketch or "", pb.sketch or "")
        if sim < t.near_duplicate_similarity:
            return False
        flagged.setdefault(a, f"{sim:.0%} like {pb.url}")
        flagged.setdefault(b, f"{sim:.0%} like {pa.url}")
        return True

    for (a, b), shared in sorted(pairs.items()):
        if shared >= 2:
            judge(a, b)
    # A large group of near duplicates (product variants, faceted listings) shares every key
    # hash with more than _MAX_POSTING pages: no postings above make candidates of them. In
    # each such posting, pages whose next two key hashes are the same too (a band of three:
    # not tied to a position, as a page's own shingle among its smallest shifts the others)
    # are compared with a few of the band's first pages: linear in the posting's size, and
    # nothing kept from one posting to the next. Pages sharing only a template paragraph
    # rarely share a band of three, and cost at most _LEADERS comparisons each when they do.
    for h, ids in postings.items():
        if len(ids) <= _MAX_POSTING:
            continue
        bands: dict[tuple[str, str], list[int]] = defaultdict(list)
        for i in ids:
            hs = keys[i]
            k = hs.index(h)
            if k + 2 < len(hs):
                bands[(hs[k + 1], hs[k + 2])].append(i)
        for band in bands.values():
            if len(band) <= _MAX_POSTING:
                continue
            leaders: list[int] = []
            for i in band:
                if not any(judge(lead, i) for lead in leaders) and len(leaders) < _LEADERS:
                    leaders.append(i)
    for i in sorted(flagged):
        yield pages[i].url, flagged[i]


@rule("lang-missing", "content", "notice", "Language not declared",
      explanation="<html lang> tells browsers, screen readers and search engines the language.",
      fix="Add lang to the <html> element.")
def lang_missing(site: SiteView, t: Thresholds) -> Out:
    for p in site.html_pages:
        if not (p.lang or "").strip():
            yield p.url
