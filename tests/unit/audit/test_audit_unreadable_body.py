"""A page that answered 200 but whose body could not be read (an encoding we never asked for,
a compressed stream cut short, framing broken mid-body, a body over the cap): the fetch engine
returns the status with an error. It is a page that could not be fetched, not a page without a
title, description and heading — and no search engine indexes what cannot be read."""

from __future__ import annotations

from pathlib import Path

import pytest

from fairfetch.audit.pagerows import Fetched
from fairfetch.audit.rules import run_rules
from fairfetch.audit.view import load_view

from .conftest import crawl_file_of

S = "http://site.test"
HTML = {"content-type": "text/html; charset=utf-8"}
HOME = (b"<html lang=en><head><title>Home of the site</title></head>"
        b"<body><a href='/b'>b</a></body></html>")


@pytest.mark.parametrize(("kind", "detail"), [
    ("http", "unknown content coding 'br'"),
    ("http", "gzip stream truncated"),
    ("too_large", "body over 10000000 bytes"),
])
def test_audit_a_200_whose_body_could_not_be_read_is_a_fetch_failure(
    tmp_path: Path, kind: str, detail: str
) -> None:
    fetched = [
        Fetched(S + "/", 200, None, "", HTML, HOME, len(HOME), 0.01),
        Fetched(S + "/b", 200, kind, detail, HTML, b"", 0, 0.01),
    ]
    cf = crawl_file_of(tmp_path / "u.db", S + "/", fetched)
    try:
        row = cf.conn.execute(
            "SELECT status, error, indexable, indexability FROM pages WHERE url = ?", (S + "/b",)
        ).fetchone()
        site = load_view(cf.conn)
    finally:
        cf.close()
    assert row[:2] == (200, f"{kind}: {detail}")
    assert row[2] == 0
    assert row[3] == f"body not readable ({kind}: {detail})"
    by_rule = run_rules(site).by_rule()
    assert [(f.url, f.detail) for f in by_rule["fetch-failed"]] == [(S + "/b", f"{kind}: {detail}")]
    judged_on_content = {
        rule for rule, found in by_rule.items() if any(f.url == S + "/b" for f in found)
    }
    assert judged_on_content == {"fetch-failed"}
