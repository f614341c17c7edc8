"""/feeds.opml names a feed's site (htmlUrl) only when it is a web address: feed readers that
import the file show htmlUrl as a link, and a feed's <link> is whatever its publisher wrote."""

from __future__ import annotations

from typing import Any
from xml.etree import ElementTree

import pytest

from .conftest import add_crawled


@pytest.mark.parametrize(
    "link",
    [
        "javascript:alert(1)",
        " JaVaScRiPt:alert(1)",
        "java\tscript:alert(1)",
        "data:text/html,<script>alert(1)</script>",
        "vbscript:msgbox(1)",
        "mailto:someone@example.test",  # no site
        "file:///etc/passwd",
        "https:no-host",
    ],
)
def test_web_opml_leaves_out_a_site_link_that_is_no_web_address(
    client: Any, store: Any, link: str
) -> None:
    add_crawled(store, "http://hostile.test/feed", title="Hostile", link=link)
    add_crawled(store, "http://fine.test/feed", title="Fine", link="https://fine.test/")
    root = ElementTree.fromstring(client.get("/feeds.opml").content)
    outlines = {o.get("xmlUrl"): o for o in root.findall("./body/outline")}
    assert set(outlines) == {"http://hostile.test/feed", "http://fine.test/feed"}  # both kept
    assert outlines["http://hostile.test/feed"].get("htmlUrl") is None
    assert outlines["http://hostile.test/feed"].get("text") == "Hostile"
    assert outlines["http://fine.test/feed"].get("htmlUrl") == "https://fine.test/"
    assert store.find_feed("http://hostile.test/feed").link == link  # stored data untouched
