"""A request body the API cannot read is a 422 whose detail names the body and what is wrong
with it, never a bare position ('1: JSON decode error') or 'request'."""

from __future__ import annotations

from typing import Any

import pytest

from .conftest import TOKEN

AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.mark.parametrize(
    ("body", "content_type", "expected"),
    [
        (
            b"{bad",
            "application/json",
            "body: JSON decode error: Expecting property name enclosed in double quotes "
            "(at character 2)",
        ),
        (
            b'{"url": "http://x.test/"',
            "application/json",
            "body: JSON decode error: Expecting ',' delimiter (at character 25)",
        ),
        (b"[]", "application/json", "body: Input should be a valid dictionary"),
        (b"", "application/json", "body: Field required"),
        (b'{"url": 5}', "application/json", "url: Input should be a valid string"),
        (b"{}", "application/json", "url: Field required"),
    ],
)
def test_web_api_unreadable_body_is_a_422_naming_the_body(
    client: Any, store: Any, body: bytes, content_type: str, expected: str
) -> None:
    r = client.post("/api/v1/feeds", content=body, headers={**AUTH, "Content-Type": content_type})
    assert r.status_code == 422
    assert r.headers["content-type"].startswith("application/json")
    assert expected in r.json()["detail"], r.json()["detail"]
    assert r.json()["errors"]  # FastAPI's own detail kept beside ours
    assert list(store.iter_feeds()) == []
