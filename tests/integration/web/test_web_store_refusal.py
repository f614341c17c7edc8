"""The database refused a request's work (read-only, locked, gone): the answer is 503 Service
Unavailable (RFC 9110 §15.6.4: a condition of the server that may be gone after a while), not
502 Bad Gateway (the server is no gateway, and nothing upstream answered wrongly), and its body
is the store's one line, without a Python class name in front of it."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from fairfetch.config import Settings
from fairfetch.store import SqlStore, open_store
from fairfetch.store import notify_repo as repo

from .conftest import TOKEN, add_crawled

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

URL = "http://refused.example.test/feed.xml"
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


@pytest.fixture
def read_only(tmp_path: Path) -> Iterator[tuple[TestClient, int, str]]:
    """The app on a read-only copy of a database holding one feed and one subscription to it:
    (client, feed id, the subscription's management token)."""
    path = tmp_path / "web.db"
    writable = open_store(f"sqlite:///{path}")
    try:
        feed_id = add_crawled(writable, URL)
        token = repo.subscribe(
            writable, "reader@x.example", feed_id, mode="realtime", hour=8, weekday=0,
            tz="UTC", only=(), exclude=(), now=NOW,
        ).subscription["manage_token"]
    finally:
        writable.close()
    store: SqlStore = open_store(f"sqlite:///file:{path}?mode=ro&uri=true")
    from fairfetch.web.app import create_app

    try:
        with TestClient(create_app(Settings(db=store.url, admin_token=TOKEN), store)) as c:
            yield c, feed_id, token
    finally:
        store.close()


def _clean(message: str) -> None:
    assert "\n" not in message.strip(), message
    assert "StoreError" not in message, message
    for marker in ("[SQL:", "[parameters:", "sqlalche.me", "Traceback"):
        assert marker not in message, message


def test_web_api_delete_on_a_read_only_database_is_a_503_with_one_clean_line(
    read_only: tuple[TestClient, int, str],
) -> None:
    client, feed_id, _ = read_only
    r = client.delete(f"/api/v1/feeds/{feed_id}", headers={"Authorization": f"Bearer {TOKEN}"})
    assert r.status_code == 503, (r.status_code, r.text)
    assert r.headers["content-type"].startswith("application/json")
    detail = r.json()["detail"]
    assert detail.startswith(f"store: removing feed {URL!r}: "), detail
    assert "readonly database" in detail, detail
    _clean(detail)
    assert client.get(f"/api/v1/feeds/{feed_id}").status_code == 200  # still there


def test_web_page_delete_on_a_read_only_database_is_a_503_page(
    read_only: tuple[TestClient, int, str],
) -> None:
    client, feed_id, _ = read_only
    r = client.post(f"/feeds/{feed_id}/delete", data={"token": TOKEN}, follow_redirects=False)
    assert r.status_code == 503, (r.status_code, r.text)
    assert r.headers["content-type"].startswith("text/html")
    assert "Error 503" in r.text
    problem = r.text.split('role="alert">', 1)[1].split("</p>", 1)[0]
    assert problem.startswith("store: removing feed "), problem
    assert "readonly database" in problem, problem
    _clean(problem)
    assert "StoreError" not in r.text


def test_web_one_click_unsubscribe_on_a_read_only_database_is_a_503_without_the_token(
    read_only: tuple[TestClient, int, str],
) -> None:
    """RFC 8058's one-click POST, as a mail client sends it: the page says what failed, and
    neither it nor the message carries the reader's token or address back."""
    client, _, token = read_only
    r = client.post(f"/unsubscribe/{token}", data={"List-Unsubscribe": "One-Click"})
    assert r.status_code == 503, (r.status_code, r.text)
    problem = r.text.split('role="alert">', 1)[1].split("</p>", 1)[0]
    assert problem.startswith("store: unsubscribing"), problem
    assert "readonly database" in problem, problem
    _clean(problem)
    assert token not in r.text
    assert "reader@x.example" not in r.text
