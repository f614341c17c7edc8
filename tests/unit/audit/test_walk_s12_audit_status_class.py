"""A URL robots.txt disallows was never requested: the Overview counted it under "Pages no
response" and the Response Codes sheet classed it "no response", which a site owner reads as a
server that failed. It is "blocked by robots.txt" on both now; a page that got no answer is
still "no response"."""

from __future__ import annotations

import csv
from pathlib import Path

from fairfetch.audit.export import export_crawl
from fairfetch.audit.pagerows import Fetched

from .conftest import crawl_file_of

S = "http://site.test"
HTML = {"content-type": "text/html; charset=utf-8"}
HOME = (b"<html lang=en><head><title>Home of the site</title></head><body>"
        b"<a href='/private/x'>x</a><a href='/down'>d</a></body></html>")


def _crawl_file(path: Path) -> None:
    fetched = [
        Fetched(S + "/", 200, None, "", HTML, HOME, len(HOME), 0.01),
        Fetched(S + "/private/x", None, "robots", f"disallowed by {S}/robots.txt", {}, b"", 0, 0),
        Fetched(S + "/down", None, "timeout", "read timed out", {}, b"", 0, 0.01),
    ]
    crawl_file_of(path, S + "/", fetched).close()


def _sheet(out: Path, name: str) -> list[list[str]]:
    with (out / f"{name}.csv").open(encoding="utf-8", newline="") as fh:
        return list(csv.reader(fh))


def test_walk_s12_audit_robots_blocked_is_not_no_response(tmp_path: Path) -> None:
    _crawl_file(tmp_path / "site.crawl")
    out = tmp_path / "csv"
    export_crawl(tmp_path / "site.crawl", csv_dir=out)
    overview = dict((row[0], row[1]) for row in _sheet(out, "overview"))
    assert overview["Pages 2xx"] == "1"
    assert overview["Pages blocked by robots.txt"] == "1"
    assert overview["Pages no response"] == "1"  # the timeout alone
    classes = {row[0]: row[2] for row in _sheet(out, "response_codes")[1:]}
    assert classes == {
        S + "/": "2xx", S + "/private/x": "blocked by robots.txt", S + "/down": "no response",
    }
