"""A meta description is read as a search engine shows it: runs of HTML white space (a
template's line breaks and indentation inside the attribute) are one space, as in a title.
Counted raw, an indented 140-character description was 'too long' at 200 characters, and two
pages differing only in indentation were not duplicates."""

from __future__ import annotations

from fairfetch.audit.extract import extract_page
from fairfetch.audit.rules import run_rules

from .conftest import good_page, site

WORDS = "Everything about widgets, made by hand in our workshop since 1921 and shipped worldwide."


def _page(content: str) -> bytes:
    return (
        f'<html lang=en><head><title>T</title><meta name="description" content="{content}">'
        "</head><body>x</body></html>"
    ).encode()


def test_audit_description_white_space_runs_are_one_space() -> None:
    indented = "\n        " + "\n        ".join(WORDS.split(" ")) + "\n    "
    facts = extract_page(_page(indented), "https://site.test/a")
    assert facts.descriptions == [" ".join(WORDS.split())]
    # A no-break space is text a browser shows: kept.
    facts = extract_page(_page("caf&eacute;&nbsp;&amp;  bar"), "https://site.test/b")
    assert facts.descriptions == ["caf\u00e9\u00a0& bar"]


def test_audit_indented_description_is_judged_by_what_is_shown() -> None:
    indented = "\n        " + "\n        ".join(WORDS.split(" ")) + "\n    "
    shown = " ".join(WORDS.split())
    assert len(shown) <= 155 < len(indented.strip())
    pages = []
    for path, content in (("/a", indented), ("/b", "  " + shown)):
        desc = extract_page(_page(content), "https://site.test" + path).descriptions[0]
        pages.append(good_page(path, meta_description=desc))
    fired = {(f.rule_id, f.url) for f in run_rules(site(*pages)).findings}
    assert not {r for r, _ in fired} & {"description-too-long", "description-too-wide"}
    assert {u for r, u in fired if r == "description-duplicate"} == {p.url for p in pages}
