"""Searching again from a filtered search page (/search?q=…&kind=podcast) keeps the filters:
the page's search box submitted q alone, so the next search listed every kind."""

from __future__ import annotations

import re
from typing import Any

from .conftest import add_crawled


def _form_fields(html: str) -> dict[str, str]:
    form = re.search(r'<form action="/search"[^>]*class="big-search">.*?</form>', html, re.S)
    assert form is not None
    return dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)"', form.group(0)))


def test_web_search_form_keeps_kind_status_and_page_size(client: Any, store: Any) -> None:
    add_crawled(store, "http://pod.test/feed", title="Morning show", kind="podcast")
    add_crawled(store, "http://blog.test/feed", title="Morning notes", kind="blog")
    page = client.get(
        "/search", params={"q": "morning", "kind": "podcast", "status": "ok", "per_page": 20}
    ).text
    assert _form_fields(page) == {"kind": "podcast", "status": "ok", "per_page": "20"}
    assert "Morning notes" not in page
    # what that form submits next is still filtered
    again = client.get("/search", params={"q": "morn", **_form_fields(page)}).text
    assert "Morning show" in again
    assert "Morning notes" not in again


def test_web_search_form_without_filters_adds_none(client: Any) -> None:
    assert _form_fields(client.get("/search", params={"q": "x"}).text) == {}
    assert _form_fields(client.get("/search").text) == {}
