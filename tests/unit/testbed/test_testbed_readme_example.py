"""The README's "crawl the testbed by hand" walk-through names feeds of the default testbed
(``fairfetch testbed`` without ``--seed``): each must be a healthy feed there, or a newcomer's
first command ends in a 404 (it once named ``blog1.test``, which seed 1 serves as
``www.blog1.test``)."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit

from fairfetch.testbed.server import Testbed

README = Path(__file__).resolve().parents[3] / "README.md"


def test_readme_testbed_examples_are_healthy_feeds_of_the_default_seed() -> None:
    urls = set(re.findall(r"fairfetch feeds (?:add|show) (http://\S+\.test:8999/\S+)",
                          README.read_text()))
    assert urls, "the README no longer walks through the testbed"
    testbed = Testbed(1, port=8999)  # the CLI's default seed; nothing is served or started
    healthy = {(urlsplit(s.url).hostname, urlsplit(s.url).path): s.behaviour
               for s in testbed.catalog()}
    for url in urls:
        parts = urlsplit(url)
        assert healthy.get((parts.hostname, parts.path)) == "blog", url
