"""A stranger's request body is refused past a small cap before it is read whole.

Every writing form and the API's add take a URL and a token; FastAPI reads a JSON body whole
before any dependency runs, so before the admin token is even looked at: an anonymous POST of
a gigabyte to /api/v1/feeds was read into memory (and parsed) to be told 422. The app is driven
here through its ASGI interface with a body source that counts what was pulled from it, so
"never read whole" is asserted, not assumed.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from fairfetch.config import Settings
from fairfetch.store import SqlStore, open_store, websub_repo
from fairfetch.web.app import create_app
from fairfetch.web.body_cap import MAX_REQUEST_BODY

from .conftest import TOKEN

CHUNK = 64 * 1024
BIG = 16 * 1024 * 1024  # far past the cap, small enough that the unfixed app finishes


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqlStore]:
    s = open_store(f"sqlite:///{tmp_path}/cap.db")
    yield s
    s.engine.dispose()


class Body:
    """An ASGI body source of ``total`` bytes in CHUNK pieces, counting what the app pulled."""

    def __init__(self, head: bytes, total: int, filler: bytes = b"a") -> None:
        self.head, self.total, self.filler = head, total, filler
        self.pulled = 0

    async def receive(self) -> dict[str, Any]:
        if self.pulled >= self.total:
            await asyncio.Event().wait()  # the client waits for the answer: no disconnect yet
        piece = self.head if self.pulled == 0 else b""
        piece += self.filler * (min(CHUNK, self.total - self.pulled) - len(piece))
        self.pulled += len(piece)
        return {"type": "http.request", "body": piece, "more_body": self.pulled < self.total}


async def call(
    store: SqlStore,
    method: str,
    path: str,
    body: Body,
    *,
    content_type: str,
    declared: int | None = None,
    extra: list[tuple[bytes, bytes]] | None = None,
) -> tuple[int, dict[str, str], bytes]:
    app = create_app(Settings(admin_token=TOKEN, max_body_bytes=BIG * 2), store)
    headers = [(b"host", b"127.0.0.1:8080"), (b"content-type", content_type.encode())]
    if declared is not None:
        headers.append((b"content-length", str(declared).encode()))
    else:
        headers.append((b"transfer-encoding", b"chunked"))
    headers += extra or []
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": headers,
        "server": ("127.0.0.1", 8080),
        "client": ("127.0.0.1", 50000),
    }
    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(scope, body.receive, send)
    start = next(m for m in sent if m["type"] == "http.response.start")
    payload = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    hdrs = {k.decode().lower(): v.decode() for k, v in start["headers"]}
    return start["status"], hdrs, payload


async def test_web_api_add_with_a_huge_chunked_body_is_413_after_the_cap_not_read_whole(
    store: SqlStore,
) -> None:
    body = Body(b'{"url": "http://a.test/', BIG)
    status, headers, payload = await call(
        store, "POST", "/api/v1/feeds", body, content_type="application/json"
    )
    assert status == 413
    assert body.pulled <= MAX_REQUEST_BODY + CHUNK  # stopped at the cap, not read to the end
    detail = json.loads(payload)["detail"]
    assert str(MAX_REQUEST_BODY) in detail
    assert headers.get("connection") == "close"  # the rest is not waited for on this connection
    assert store.list_feeds() == []


async def test_web_api_add_with_a_declared_length_over_the_cap_reads_no_byte(
    store: SqlStore,
) -> None:
    body = Body(b'{"url": "http://a.test/', BIG)
    status, _, payload = await call(
        store, "POST", "/api/v1/feeds", body, content_type="application/json", declared=BIG,
        extra=[(b"authorization", f"Bearer {TOKEN}".encode())],
    )
    assert status == 413
    assert body.pulled == 0
    assert "body" in json.loads(payload)["detail"]


async def test_web_form_post_over_the_cap_is_a_413_page(store: SqlStore) -> None:
    body = Body(b"url=http%3A%2F%2Fa.test%2F", BIG)
    status, headers, payload = await call(
        store, "POST", "/add", body, content_type="application/x-www-form-urlencoded"
    )
    assert status == 413
    assert body.pulled <= MAX_REQUEST_BODY + CHUNK
    assert headers["content-type"].startswith("text/html")
    assert b"413" in payload
    assert str(MAX_REQUEST_BODY).encode() in payload
    assert "content-security-policy" in headers  # the page goes out with the usual headers


async def test_web_a_body_within_the_cap_still_reaches_the_route(store: SqlStore) -> None:
    """The other direction: a body under the cap is handed on whole, byte for byte."""
    url = "http://a.test/" + "p" * 100
    raw = json.dumps({"url": url}).encode()
    body = Body(raw, len(raw))
    status, _, payload = await call(
        store, "POST", "/api/v1/feeds", body, content_type="application/json",
        declared=len(raw),
    )
    assert status == 401  # read, parsed, then refused for want of the token
    assert body.pulled == len(raw)
    assert "admin token" in json.loads(payload)["detail"]


async def test_web_websub_callback_keeps_its_own_larger_cap(store: SqlStore) -> None:
    """A hub's fat ping may run to max_body_bytes; the small cap is not for the callback.
    (On a token of ours: one we never issued is answered 404 before its body is read.)"""
    now = datetime.now(UTC)
    feed, _ = store.add_feed("http://pub.test/f", now=now, politeness_key="pub.test")
    sub = websub_repo.create_subscription(
        store, feed_id=feed.id, hub_url="http://hub.test/", topic_url="http://pub.test/f",
        secret="k" * 40, requested_lease=86400, now=now,
    )  # fmt: skip
    body = Body(b"<feed>", 4 * MAX_REQUEST_BODY)
    status, _, _ = await call(
        store, "POST", f"/websub/callback/{sub.callback_token}", body,
        content_type="application/atom+xml",
    )  # fmt: skip
    # read to the end and judged by its signature (none: refused), not refused by size
    assert status == 403
    assert body.pulled == 4 * MAX_REQUEST_BODY
