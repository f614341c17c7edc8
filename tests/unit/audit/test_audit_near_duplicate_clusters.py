"""Near duplicates that come in large groups (product variants, faceted listings: the most
common near duplicates on a real site) are found too. A min-hash shared by more than 20 pages
is read as template and makes no candidate pairs, which kept the rule linear; but in a group
of 25 near-identical pages every key hash is shared by 25, and the rule found none of them
(5 pages: all 5 found). Pages that only share a template paragraph stay quiet."""

from __future__ import annotations

import random

import pytest

from fairfetch.audit.extract import _sketch
from fairfetch.audit.rules import run_rules

from .conftest import good_page, site

TEXT = " ".join(f"w{i}" for i in range(300))


def _found(pages) -> set[str]:  # type: ignore[no-untyped-def]
    return {f.url for f in run_rules(site(*pages)).findings
            if f.rule_id == "near-duplicate-content"}  # fmt: skip


@pytest.mark.parametrize("n", [5, 21, 25, 200])
def test_audit_a_large_group_of_near_duplicates_is_found(n: int) -> None:
    pages = [
        good_page(f"/variant/{i}", content_hash=f"h{i}",
                  sketch=_sketch(f"{TEXT} colour c{i} size s{i}"))
        for i in range(n)
    ]  # fmt: skip
    assert _found(pages) == {p.url for p in pages}


def test_audit_pages_sharing_only_a_template_paragraph_are_no_near_duplicates() -> None:
    rng = random.Random(7)
    template = " ".join(f"t{i}" for i in range(40))
    pages = []
    for i in range(300):
        own = " ".join(f"p{i}x{rng.randrange(10**9)}" for _ in range(250))
        pages.append(good_page(f"/article/{i}", content_hash=f"a{i}",
                               sketch=_sketch(f"{template} {own}")))  # fmt: skip
    assert _found(pages) == set()
