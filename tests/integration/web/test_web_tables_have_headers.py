"""Every data table of the directory's pages has a header cell per column, so a screen reader
can say what each figure is ("lb.test, 3" alone says neither key nor throttles)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from lxml import html as lxml_html

from .conftest import add_crawled, record_crawl


def test_web_every_table_has_a_header_per_column(client: Any, store: Any) -> None:
    now = datetime.now(UTC)
    fid = add_crawled(store, "http://a.test/feed", title="A feed", at=now - timedelta(minutes=2))
    record_crawl(store, fid, at=now - timedelta(minutes=1), outcome="throttled", key="lb.test")
    add_crawled(store, "http://b.test/feed", title="Bad", status="error", error_count=2)
    for path in ("/", "/feeds", f"/feeds/{fid}", "/crawlstats", "/search?q=feed"):
        doc = lxml_html.fromstring(client.get(path).text)
        for table in doc.iter("table"):
            headers = table.xpath("./thead/tr/th")
            first_row = table.xpath("./tbody/tr[1]/td")
            label = table.get("class") or table.get("id")
            assert headers, (path, label)
            if first_row and first_row[0].get("colspan") is None:
                assert len(headers) == len(first_row), (path, label)
    throttles = lxml_html.fromstring(client.get("/crawlstats").text).xpath(
        "//div[@id='window-last_hour']//table[@class='throttles']"
    )[0]
    assert [th.text_content() for th in throttles.xpath("./thead/tr/th")] == [
        "Politeness key",
        "Throttles",
    ]
    assert [td.text_content() for td in throttles.xpath("./tbody/tr[1]/td")] == ["lb.test", "1"]
