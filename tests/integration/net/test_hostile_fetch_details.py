"""What a hostile server says ends up in ``error_detail``, and from there in ``feeds.last_error``,
a ``crawls`` row per attempt, the CLI and the web pages. A server must not be able to write 60 KB
of its own bytes (or a multi-line caret diagram) there on every crawl: a detail is one line,
bounded, and still says what went wrong. Raw bytes on 127.0.0.1."""

from __future__ import annotations

import pytest

from .conftest import fetch_raw

JUNK = 60_000  # under the 64 KiB line limit, so the server's bytes reach the detail


@pytest.mark.parametrize(
    ("head", "body", "kind", "says"),
    [
        (b"x" * JUNK, b"", "http", "Bad status line"),
        (b"HTTP/1.1 200 OK\r\nX-A: a\x00" + b"c" * JUNK, b"ok", "http", "Invalid HTTP header"),
        (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked",
            b"z" * JUNK + b"\r\n",
            "http",
            "chunk size",
        ),
        (b"HTTP/1.1 404 " + b"r" * JUNK, b"", "http", "404"),
        (b"HTTP/1.1 200 OK\r\nContent-Encoding: " + b"e" * JUNK, b"x", "http", "content-encoding"),
        (b"HTTP/1.1 302 Found\r\nLocation: ftp://" + b"l" * JUNK, b"", "redirect", "bad Location"),
    ],
    ids=["status-line", "header", "chunk-size", "reason", "encoding", "location"],
)
async def test_a_servers_junk_makes_a_short_one_line_detail(
    head: bytes, body: bytes, kind: str, says: str
) -> None:
    r = await fetch_raw(head, body, length=False)
    assert r.error_kind == kind
    assert says in r.error_detail
    assert "\n" not in r.error_detail
    assert len(r.error_detail) <= 500
