"""The admin token: reads are public, writing actions (add, refresh, delete) need it.

An empty ``admin_token`` disables writing altogether (a 403 that says how to enable it), so a
directory started without configuration can never be written to by a stranger.
"""

from __future__ import annotations

import secrets
from urllib.parse import quote, unquote

from fastapi import HTTPException, Request

from fairfetch.config import Settings

COOKIE = "fairfetch_admin"

DISABLED = (
    "writing is disabled: no admin token is configured "
    "(set FAIRFETCH_ADMIN_TOKEN or admin_token in the config file)"
)


def token_ok(settings: Settings, presented: str | None) -> bool:
    expected = settings.admin_token
    if not expected or not presented:
        return False
    return secrets.compare_digest(presented.encode("utf-8", "replace"), expected.encode())


def cookie_value(token: str) -> str:
    """The token as the admin cookie carries it: percent-encoded UTF-8, because a header can
    only hold Latin-1 and a token may be any text ("секрет", an emoji)."""
    return quote(token, safe="")


def token_of_cookie(value: str | None) -> str | None:
    """The token an admin cookie set by :func:`cookie_value` carries."""
    return unquote(value, errors="replace") if value else None


def header_text(value: str) -> str:
    """A header value as the client meant it: HTTP carries bytes, Starlette reads them as
    Latin-1, and clients (curl, httpx) send a non-ASCII token as UTF-8."""
    try:
        return value.encode("latin-1").decode("utf-8")
    except UnicodeError:
        return value


def bearer_of(request: Request) -> str | None:
    header = request.headers.get("authorization", "")
    scheme, _, value = header.partition(" ")
    if scheme.lower() != "bearer" or not value.strip():
        return None
    return value.strip()


def request_is_admin(settings: Settings, request: Request) -> bool:
    """For a page that shows more to the admin: the bearer (read as the API reads it, a
    non-ASCII token sent as UTF-8 included), else the admin cookie."""
    bearer = bearer_of(request)
    presented = header_text(bearer) if bearer else token_of_cookie(request.cookies.get(COOKIE))
    return token_ok(settings, presented)


def require_admin(settings: Settings, presented: str | None) -> None:
    """Raise the HTTP error that explains why this write is refused, if it is."""
    if not settings.admin_token:
        raise HTTPException(status_code=403, detail=DISABLED)
    if not presented:
        raise HTTPException(
            status_code=401,
            detail="this action needs the admin token (Authorization: Bearer <token>)",
            headers={"WWW-Authenticate": "Bearer"},
        )
    if not token_ok(settings, presented):
        raise HTTPException(status_code=403, detail="the admin token is not valid")
