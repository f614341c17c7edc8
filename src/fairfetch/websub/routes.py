"""WebSub callback endpoints, included by the web app (thin: the logic is in service.py).

``GET  /websub/callback/{token}`` — verification of intent (and hub.mode=denied)
``POST /websub/callback/{token}`` — content distribution (pings); a body over
``settings.max_body_bytes`` (the cap on what we fetch) is refused with 413 and never read whole

Deliveries are routed by the callback token in the path — one fresh, unguessable token per
subscription — never by the Link headers of the delivery, which anyone can write.

The app provides the service as ``app.state.websub`` (a :class:`WebSubService`), or the parts to
build one: the web app's context ``app.state.fairfetch`` (``store``, ``settings``, ``crawler``).
"""

from __future__ import annotations

from fastapi import APIRouter, BackgroundTasks, Request
from fastapi.responses import PlainTextResponse, Response

from fairfetch.websub.service import WebSubService

router = APIRouter(tags=["websub"], include_in_schema=False)


def service_of(request: Request) -> WebSubService:
    """The app's service: ``app.state.websub`` if set (``run`` shares it with the upkeep loop),
    else one built once from the web app's context (``app.state.fairfetch``)."""
    state = request.app.state
    svc = getattr(state, "websub", None)
    if svc is None:
        ctx = getattr(state, "fairfetch", None) or state
        svc = WebSubService(ctx.store, ctx.settings, crawler=getattr(ctx, "crawler", None))
        state.websub = svc
    return svc


@router.get("/websub/callback/{token}")
async def verify(token: str, request: Request) -> Response:
    answer = await service_of(request).verify_intent(token, dict(request.query_params))
    if answer.status == 200:
        # Exactly the challenge as the whole body: no JSON quoting, no trailing newline.
        return PlainTextResponse(answer.body, status_code=200)
    return Response(status_code=404)


async def _capped_body(request: Request, limit: int) -> bytes | None:
    """The raw body (the signature is over exactly these bytes), or None past ``limit`` bytes:
    read no further than that, whatever Content-Length says or does not say (chunked)."""
    declared = request.headers.get("content-length", "")
    if declared.strip().isdigit() and int(declared) > limit:
        return None
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            return None
    return bytes(body)


@router.post("/websub/callback/{token}")
async def deliver(token: str, request: Request, background: BackgroundTasks) -> Response:
    svc = service_of(request)
    unknown = await svc.refuse_unknown(token)
    if unknown is not None:  # not a byte of a stranger's body read
        return Response(status_code=unknown.status)
    limit = svc.settings.max_body_bytes
    body = await _capped_body(request, limit)
    if body is None:
        refused = await svc.refuse_too_large(token, limit)
        return Response(status_code=refused.status)
    answer = await svc.receive(token, request.headers, body)
    if answer.delivery_id is not None:
        background.add_task(svc.schedule_processing, answer.delivery_id)
    return PlainTextResponse(answer.body, status_code=answer.status, headers=dict(answer.headers))
