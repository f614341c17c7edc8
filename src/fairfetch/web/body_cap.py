"""A cap on request bodies, applied before any route reads one.

Everything the directory takes in a body is small: a URL and a token (the writing forms, the
API's add), a reader's address and schedule (the notify forms). Yet FastAPI reads a JSON body
whole, and parses it, before any dependency runs, so before the admin token is looked at: an
anonymous stranger's gigabyte POST to ``/api/v1/feeds`` was held in memory to be told 422. The
cap is checked on the declared ``Content-Length`` (nothing read) and, for a chunked body, while
it arrives (read no further than the cap); past it the answer is 413 and the connection closes.

The WebSub callback is exempt: a hub's fat ping may run to ``max_body_bytes``, and its route
applies that cap itself (and counts the refusal as a rejected ping).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.datastructures import Headers
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["EXEMPT_PREFIXES", "MAX_REQUEST_BODY", "BodyCap"]

#: Bytes a request body may hold (64 KiB: a form or a JSON add is well under 4 KiB).
MAX_REQUEST_BODY = 64 * 1024

#: Paths whose routes cap their own bodies.
EXEMPT_PREFIXES = ("/websub/callback/",)

#: Methods whose body no route reads: left unread, whatever they carry.
_NO_BODY_READ = frozenset({"GET", "HEAD", "OPTIONS"})

Refusal = Callable[[Scope, str], Awaitable[Response] | Response]


def refusal_text(limit: int) -> str:
    return (
        f"request body over {limit} bytes: refused, read no further "
        "(the forms and the API take far less)"
    )


class BodyCap:
    """ASGI middleware: a body over ``limit`` bytes is answered by ``refuse`` (a 413 page or
    JSON), read no further; a body within it is handed on whole."""

    def __init__(self, app: ASGIApp, *, limit: int, refuse: Refusal) -> None:
        self.app = app
        self.limit = limit
        self.refuse = refuse

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope["method"] in _NO_BODY_READ
            or scope["path"].startswith(EXEMPT_PREFIXES)
        ):
            await self.app(scope, receive, send)
            return
        declared = Headers(scope=scope).get("content-length", "").strip()
        if declared.isdigit() and int(declared) > self.limit:
            await self._refuse(scope, receive, send)
            return
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away: pass that on
                await self.app(scope, _replay([message], receive), send)
                return
            body += message.get("body", b"")
            if len(body) > self.limit:
                await self._refuse(scope, receive, send)
                return
            if not message.get("more_body", False):
                break
        whole: Message = {"type": "http.request", "body": bytes(body), "more_body": False}
        await self.app(scope, _replay([whole], receive), send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        answer = self.refuse(scope, refusal_text(self.limit))
        response = answer if isinstance(answer, Response) else await answer
        response.status_code = 413
        response.headers["Connection"] = "close"
        await response(scope, _replay([], receive), send)


def _replay(messages: list[Message], receive: Receive) -> Receive:
    """``messages`` first, then the client's own (a disconnect, once the answer is out)."""
    pending = list(messages)

    async def replay() -> Message:
        if pending:
            return pending.pop(0)
        return await receive()

    return replay
