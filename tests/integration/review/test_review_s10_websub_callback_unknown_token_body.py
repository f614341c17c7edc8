"""Review of f1536b5 (web/body_cap.py: the 64 KiB request-body cap, the WebSub callback exempt).

The cap's reason is that a stranger's body was read before anything looked at who sent it. The
callback is exempt because a hub's fat ping may run to ``max_body_bytes`` (10 MB by default),
and websub/routes.py ``deliver`` caps it itself, but it reads the body (``_capped_body``) before
``WebSubService.receive`` looks the token up: a POST to a callback token we never issued
(anyone may send one: see 18668de) is read up to 10 MB, then answered 404. The body-cap test
``test_web_websub_callback_keeps_its_own_larger_cap`` even asserts that read, for the token
'no-such-token'. Looking the token up first (an unknown one needs no body) closes it: fixed,
WebSubService.refuse_unknown answers 404 before the body is read. Driven through the app's ASGI
interface with a body source that counts what was pulled from it, as in
test_web_request_body_cap.py.
"""

from __future__ import annotations

import asyncio
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

from fairfetch.config import Settings
from fairfetch.store import open_store
from fairfetch.web.app import create_app

CHUNK = 64 * 1024
TOTAL = 4 * 1024 * 1024  # well under max_body_bytes (10 MB): the callback's own cap allows it


class Body:
    """A chunked ASGI body of TOTAL bytes, counting what the app pulled."""

    def __init__(self) -> None:
        self.pulled = 0

    async def receive(self) -> dict[str, Any]:
        if self.pulled >= TOTAL:
            await asyncio.Event().wait()  # the client waits for the answer
        piece = b"a" * min(CHUNK, TOTAL - self.pulled)
        self.pulled += len(piece)
        return {"type": "http.request", "body": piece, "more_body": self.pulled < TOTAL}


async def test_review_s10_a_post_to_an_unknown_callback_token_is_not_read_whole(
    tmp_path: Path,
) -> None:
    store = open_store(f"sqlite:///{tmp_path}/cb.db")
    try:
        app = create_app(Settings(admin_token="t"), store)
        body = Body()
        scope = {
            "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
            "method": "POST", "scheme": "http", "path": "/websub/callback/no-such-token",
            "raw_path": b"/websub/callback/no-such-token", "root_path": "", "query_string": b"",
            "headers": [(b"host", b"127.0.0.1:8080"), (b"transfer-encoding", b"chunked"),
                        (b"content-type", b"application/atom+xml")],
            "server": ("127.0.0.1", 8080), "client": ("127.0.0.1", 50000),
        }
        sent: list[MutableMapping[str, Any]] = []

        async def send(message: MutableMapping[str, Any]) -> None:
            sent.append(message)

        await app(scope, body.receive, send)
    finally:
        store.close()
    start = next(m for m in sent if m["type"] == "http.response.start")
    assert start["status"] == 404
    assert body.pulled < TOTAL, "a stranger's 4 MiB was read to be told the token is unknown"
