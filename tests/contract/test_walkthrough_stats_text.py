"""``fairfetch stats`` as text says what docs/operations.md says it shows: crawls by outcome,
throttles by key, the queue, and the bytes fetched. The bytes were only in ``--json`` (and on
/crawlstats): the text view, the one a newcomer runs, left them out."""

from __future__ import annotations

from fairfetch.testing import Testbed

from .conftest import Cli


def test_walkthrough_stats_text_shows_the_bytes_fetched(cli: Cli, tb: Testbed) -> None:
    [blog] = tb.catalog(n=1, behaviours=["blog"])
    cli.ok("feeds", "add", blog.url)
    fetched = cli.json("stats", "--json")["bytes"]
    assert fetched["last_hour"] > 0
    text = cli.ok("stats").stdout
    assert (
        f"bytes fetched: {fetched['last_hour']} in the last hour, {fetched['last_day']} in the "
        "last day"
    ) in text, text
