"""Requests to hubs: subscribe and unsubscribe (§5.1), through the one Fetcher.

Only ``net/`` talks to the web, so the perimeter and the redirect rules apply to hubs exactly as
to feeds: a hub that answers 307/308 gets the same form re-POSTed to its Location by the Fetcher
(browsers' 301/302/303-turn-into-GET would lose the form, and a hub would see a bare GET).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol
from urllib.parse import urlsplit, urlunsplit

from fairfetch.errors import InvalidURLError
from fairfetch.net.outcome import FetchResult
from fairfetch.net.retry_after import DEFAULT_RETRY_AFTER

__all__ = [
    "CALLBACK_PATH", "HubAnswer", "callback_url", "request_subscription", "subscription_form",
]

#: Route prefix of the callback endpoints (websub/routes.py).
CALLBACK_PATH = "/websub/callback/"

#: Redirects the Fetcher follows with a GET and no body (307/308 re-POST the same form).
_FORM_LOST = frozenset({301, 302, 303})


class _Fetches(Protocol):
    async def fetch(
        self, url: str, *, method: str = ..., data: bytes | Mapping[str, str] | None = ...,
        max_bytes: int | None = ...,
    ) -> FetchResult: ...


def callback_url(public_url: str, token: str) -> str:
    """``{public_url}/websub/callback/{token}``; a query string on public_url is kept intact."""
    parts = urlsplit(public_url)
    path = parts.path.rstrip("/") + CALLBACK_PATH + token
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


def subscription_form(
    mode: str, *, callback: str, topic: str, lease_seconds: int | None = None,
    secret: str | None = None,
) -> dict[str, str]:
    form = {"hub.callback": callback, "hub.mode": mode, "hub.topic": topic}
    if mode == "subscribe":
        if lease_seconds:
            form["hub.lease_seconds"] = str(int(lease_seconds))
        if secret:
            if len(secret.encode("utf-8")) >= 200:
                raise ValueError("hub.secret must be shorter than 200 bytes")
            form["hub.secret"] = secret
    return form


@dataclass(frozen=True)
class HubAnswer:
    accepted: bool
    status: int | None
    detail: str
    final_url: str
    #: The hub throttled us (429, 503 + Retry-After): seconds it asked us to wait (clamped).
    retry_after: float | None = None


async def request_subscription(
    fetcher: _Fetches, hub_url: str, form: Mapping[str, str]
) -> HubAnswer:
    """POST the form; 2xx (202 per spec) means the hub will verify intent asynchronously.

    A hub URL nothing may request (a port past 65535, a scheme other than http(s)) is a failed
    request with the reason, not an exception: upkeep died on it, pass after pass.
    """
    try:
        result = await fetcher.fetch(hub_url, method="POST", data=dict(form),
                                     max_bytes=64 * 1024)
    except InvalidURLError as exc:
        return HubAnswer(False, None, f"unusable hub URL: {exc}", hub_url)
    if result.error_kind is not None:
        detail = f"{result.error_kind}: {result.error_detail}".rstrip(": ")
        return HubAnswer(False, result.status, detail, result.final_url)
    status = result.status or 0
    if result.throttled:
        wait = result.retry_after or DEFAULT_RETRY_AFTER
        return HubAnswer(False, status, f"hub answered {status}: throttled, Retry-After "
                         f"{wait:.0f} s", result.final_url, retry_after=wait)
    lost = next((h for h in result.hops if h.status in _FORM_LOST), None)
    if lost is not None:
        # The Fetcher followed 301/302/303 as a GET, as RFC 9110 lets it: the form reached no
        # hub, so a 2xx from where it landed (a home page) is not "the hub will verify".
        detail = (f"hub redirected with {lost.status} to {lost.location}: the form is lost on "
                  "the GET that follows (only 307/308 keep it)")
        return HubAnswer(False, status, detail, result.final_url)
    if 200 <= status < 300:
        return HubAnswer(True, status, "", result.final_url)
    body = result.body[:200].decode("utf-8", "replace").strip()
    return HubAnswer(False, status, f"hub answered {status}" + (f": {body}" if body else ""),
                     result.final_url)
