"""Duplicate and near-duplicate content are judged among indexable pages, as duplicate titles
and descriptions are (and as Screaming Frog does by default): a copy that names the original
as its canonical (a tracking-parameter or print URL), or carries noindex, is the fix the rule
asks for, not a duplicate still to fix. Two indexable copies are still found."""

from __future__ import annotations

from fairfetch.audit.extract import _sketch
from fairfetch.audit.rules import run_rules

from .conftest import BASE, good_page, site

TEXT = " ".join(f"w{i}" for i in range(300))


def _sk(words: str) -> str:
    return _sketch(" ".join(words.lower().split()))


def _found(view, rule_id: str) -> set[str]:  # type: ignore[no-untyped-def]
    return {f.url for f in run_rules(view).findings if f.rule_id == rule_id}


def test_audit_a_canonicalised_or_noindex_copy_is_no_duplicate() -> None:
    original = good_page("/a", content_hash="h1", sketch=_sk(TEXT))
    copies = [
        good_page("/a-print", content_hash="h1", sketch=_sk(TEXT), canonical=original.url,
                  indexable=False, indexability="canonicalised elsewhere"),
        good_page("/a-tracked", content_hash="h1", sketch=_sk(TEXT),
                  canonical=original.url, indexable=False,
                  indexability="canonicalised elsewhere"),
        good_page("/a-draft", content_hash="h2", sketch=_sk(TEXT + " draft"),
                  meta_robots="noindex", indexable=False, indexability="noindex (meta robots)"),
    ]  # fmt: skip
    view = site(original, *copies)
    assert _found(view, "duplicate-content") == set()
    assert _found(view, "near-duplicate-content") == set()


def test_audit_indexable_copies_are_still_duplicates() -> None:
    a = good_page("/a", content_hash="h1", sketch=_sk(TEXT))
    b = good_page("/b", content_hash="h1", sketch=_sk(TEXT))
    c = good_page("/c", content_hash="h3", sketch=_sk(TEXT + " more"))
    noindex = good_page("/d", content_hash="h1", sketch=_sk(TEXT), indexable=False,
                        indexability="noindex (meta robots)")  # fmt: skip
    view = site(a, b, c, noindex)
    assert _found(view, "duplicate-content") == {a.url, b.url}
    assert _found(view, "near-duplicate-content") == {a.url, c.url} | {b.url}
    details = {f.url: f.detail for f in run_rules(view).findings
               if f.rule_id == "duplicate-content"}  # fmt: skip
    assert details[a.url] == "same text as 1 other page(s)"
    assert BASE + "/d" not in _found(view, "near-duplicate-content")
