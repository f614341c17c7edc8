"""parse_feed against feedparser on a corpus like feedparser's own (tests/data/feeds/agreement/).

Every field both parsers model is compared (titles, links, ids, dates, authors, enclosures,
categories). Differences we make on purpose are listed, with why, in agreement.py and nowhere
else tolerated:

- ``derived``: an entry id when the feed has none (link, else a content hash: the contract wants
  a non-empty, stable id) and ``published`` from ``dc:date`` (RSS 1.0's only date), where
  feedparser models nothing. Not compared; counted apart.
- ``deliberate``: authors that fail the person test (a role such as "Editor", a platform, a
  mailbox handle, the feed's own title): we keep the mailbox, not the name. Counted as
  disagreements in the figure, and asserted to be exactly that rule.

Anything else is a failure that names the file and the field.

JSON Feed is compared by the golden tests only: feedparser 6.0 does not read JSON Feed.
"""

from __future__ import annotations

from pathlib import Path

import feedparser
import pytest

from fairfetch.feeds import parse_feed

from .agreement import Agreement, compare, feedparser_view, ours

CORPUS = Path(__file__).resolve().parents[2] / "data" / "feeds" / "agreement"
FILES = sorted(CORPUS.glob("*.xml"))
FORMATS = sorted({p.name.split("_")[0] for p in FILES})


def _agreement(path: Path) -> Agreement:
    data = path.read_bytes()
    url = "https://feeds.example.com/" + path.name
    reference = feedparser.parse(data, response_headers={"content-location": url})
    return compare(ours(parse_feed(data, url)), feedparser_view(reference))


def test_feeds_agreement_corpus_covers_every_xml_format() -> None:
    assert set(FORMATS) == {"rss090", "rss091", "rss092", "rss10", "rss20", "atom03", "atom10"}
    assert len(FILES) >= 150


@pytest.mark.parametrize("fmt", FORMATS)
def test_feeds_agreement_with_feedparser(fmt: str) -> None:
    total = Agreement()
    failures = []
    for path in (p for p in FILES if p.name.startswith(fmt + "_")):
        result = _agreement(path)
        total.add(result)
        failures += [f"{path.name} {d.where} {d.field}: ours={d.ours!r} feedparser={d.theirs!r}"
                     for d in result.diffs or []]
    assert total.total > 0
    assert not failures, "\n".join(failures[:20])


def test_feeds_agreement_overall_figure() -> None:
    total = Agreement()
    for path in FILES:
        total.add(_agreement(path))
    assert total.ratio >= 0.97, f"{total.agree}/{total.total}"
    assert total.on_purpose > 0  # the corpus exercises the person-test difference
