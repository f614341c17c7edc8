"""The admin token: reads are public, writing actions (add, refresh, delete) need it.

An empty ``admin_token`` disables writing altogether (a 403 that says how to enable it), so a
directory started without configuration can never be written to by a stranger.
"""

from __future__ import annotations

import secrets

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


def bearer_of(request: Request) -> str | None:
    header = request.headers.get("authorization", "")
    scheme, _, value = header.partition(" ")
    if scheme.lower() != "bearer" or not value.strip():
        return None
    return value.strip()


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
