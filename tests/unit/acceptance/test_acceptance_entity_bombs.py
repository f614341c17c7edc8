"""Issue 3, "Robustness": entities and network access off, "a billion-laughs feed parses in bounded
time and memory", and ``parse_feed`` returns what it could recover.

The corpus has one billion-laughs case (an RSS 2.0 feed, its DOCTYPE right after the XML
declaration). Here the same bomb rides in Atom and RDF, in an attribute, as a quadratic blow-up
and behind a long prologue, with the peak memory of the parse measured (tracemalloc; no clock).
"""

from __future__ import annotations

import subprocess
import sys
import tracemalloc

import pytest

from fairfetch import parse_feed

LOL = '<!ENTITY lol "lol">' + "".join(
    f'<!ENTITY lol{i} "{("&lol" + (str(i - 1) if i > 1 else "") + ";") * 10}">'
    for i in range(1, 10)
)
RSS = (
    '<rss version="2.0"><channel><title>L &lol9;</title><link>https://l.test/</link>'
    "<item><guid>g1</guid><title>&lol9;</title><description>&lol9;</description>"
    '<link>https://l.test/a</link><enclosure url="https://l.test/&lol9;.mp3" type="audio/mpeg"'
    ' length="1"/></item></channel></rss>'
)
ATOM = (
    '<feed xmlns="http://www.w3.org/2005/Atom"><title>&lol9;</title><id>urn:f</id>'
    '<entry><id>g1</id><title>&lol9;</title><content type="html">&lol9;</content>'
    '<link href="https://l.test/&lol9;"/></entry></feed>'
)
RDF = (
    '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" '
    'xmlns="http://purl.org/rss/1.0/"><channel rdf:about="https://l.test/"><title>&lol9;</title>'
    '<link>https://l.test/</link></channel><item rdf:about="g1"><title>&lol9;</title>'
    "<link>https://l.test/a</link></item></rdf:RDF>"
)
QUADRATIC = (
    '<?xml version="1.0"?><!DOCTYPE rss [<!ENTITY a "' + "A" * 100_000 + '">]>'
    '<rss version="2.0"><channel><title>q</title><item><guid>g1</guid><description>'
    + "&a;" * 20_000
    + "</description></item></channel></rss>"
)
LONG_PROLOGUE = "<!--" + "x" * 5000 + "-->"


def bomb(root: str, prologue: str = "", doctype_extra: str = "") -> bytes:
    return f'<?xml version="1.0"?>{prologue}<!DOCTYPE x {doctype_extra}[{LOL}]>{root}'.encode()


CASES = {
    "rss": bomb(RSS),
    "atom": bomb(ATOM),
    "rdf": bomb(RDF),
    "quadratic": QUADRATIC.encode(),
    "rss-after-long-comment": bomb(RSS, LONG_PROLOGUE),
    "atom-after-long-whitespace": bomb(ATOM, "\n" * 5000),
    "quadratic-after-long-comment": QUADRATIC.replace("?>", "?>" + LONG_PROLOGUE, 1).encode(),
    "rss-system-literal-with-gt": bomb(RSS, doctype_extra='SYSTEM "a>b" '),
}


_RSS_PROBE = """
import sys
from fairfetch import parse_feed

def hwm():
    with open("/proc/self/status") as f:
        return next(int(ln.split()[1]) for ln in f if ln.startswith("VmHWM:")) * 1024

data = sys.stdin.buffer.read()
parse_feed(b"<rss version='2.0'><channel><title>warm</title></channel></rss>")
before = hwm()
parse_feed(data)
print(hwm() - before)
"""


@pytest.mark.parametrize("name", list(CASES))
def test_acceptance_entity_bomb_is_never_expanded_and_memory_stays_bounded(name: str) -> None:
    data = CASES[name]
    tracemalloc.start()
    try:
        feed = parse_feed(data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # Expanded, lol9 is 10**9 characters and the quadratic one 2 GB: a few MB means it was not.
    assert peak < 16 * 2**20, f"peak {peak} bytes"
    # tracemalloc sees Python's allocations only, not libxml2's (a 1M-element parse: 0 MiB
    # traced, 118 MiB of RSS): the process's own high-water mark, in a process of its own.
    grown = int(
        subprocess.run(
            [sys.executable, "-c", _RSS_PROBE], input=data, capture_output=True, check=True
        ).stdout
    )
    assert grown < 32 * 2**20, f"peak RSS grew {grown} bytes"
    text = repr(feed)
    assert "lollol" not in text
    assert "A" * 200_000 not in text
    assert len(text) < 4 * len(data) + 10_000


@pytest.mark.parametrize(
    "name", ["rss", "atom", "rdf", "quadratic", "quadratic-after-long-comment"]
)
def test_acceptance_entity_bomb_keeps_its_entries_and_says_what_it_recovered(name: str) -> None:
    feed = parse_feed(CASES[name])
    assert feed.ok
    assert len(feed.entries) == 1
    assert feed.problems  # what was recovered from is said


@pytest.mark.parametrize("name", ["rss-after-long-comment", "atom-after-long-whitespace"])
def test_acceptance_entity_bomb_behind_a_long_prologue_keeps_its_entries(name: str) -> None:
    feed = parse_feed(CASES[name])
    assert feed.ok
    assert [e.id for e in feed.entries] == ["g1"]


def test_acceptance_doctype_with_a_quoted_gt_is_still_a_feed() -> None:
    feed = parse_feed(CASES["rss-system-literal-with-gt"])
    assert feed.ok
    assert [e.id for e in feed.entries] == ["g1"]
