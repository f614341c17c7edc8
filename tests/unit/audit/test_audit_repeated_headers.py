"""A response header sent twice (an application and a proxy in front of it both add it) reaches
the row builder as the fetch engine joins it: "nosniff, nosniff". Browsers read the first value
of X-Content-Type-Options (Fetch standard, "determine nosniff"), so the page is nosniff. The
row builder compared the joined value with "nosniff", and missing-x-content-type-options
fired on a page that sends it twice (a strict xfail until it read the first value)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fairfetch.audit.pagerows import Fetched
from fairfetch.audit.view import load_view

from .conftest import crawl_file_of

S = "https://site.test"
DOC = b"<html lang=en><head><title>Home</title></head><body>x</body></html>"


@pytest.mark.parametrize("value", ["nosniff, nosniff", "NoSniff, nosniff", "nosniff,"])
def test_audit_nosniff_sent_twice_is_nosniff(tmp_path: Path, value: str) -> None:
    headers = {"content-type": "text/html", "x-content-type-options": value}
    cf = crawl_file_of(tmp_path / "c.db", S + "/",
                       [Fetched(S + "/", 200, None, "", headers, DOC, len(DOC), 0.01)])
    try:
        assert load_view(cf.conn).by_url[S + "/"].x_content_type_options
    finally:
        cf.close()
