"""The web app: directory pages (Jinja2, server-rendered, no JavaScript), the JSON API under
/api/v1 (OpenAPI at /api/v1/openapi.json), /feeds.opml, /metrics, and the WebSub and notify
routes owned by those jobs.

Endpoints that touch the database are plain ``def`` functions, which FastAPI runs in its thread
pool: the event loop, shared with the crawler under ``fairfetch run``, never waits on a query.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
from fastapi import APIRouter, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.middleware.base import BaseHTTPMiddleware, RequestResponseEndpoint
from starlette.routing import Mount, compile_path
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from fairfetch.config import Settings
from fairfetch.errors import FairfetchError, InputError, NotFoundError, StoreError
from fairfetch.store.sql import SqlStore
from fairfetch.web import filters
from fairfetch.web.body_cap import MAX_REQUEST_BODY, BodyCap
from fairfetch.web.metrics import DirectoryMetrics
from fairfetch.web.stats import MinuteCache

_HERE = Path(__file__).parent

#: A route's path pattern and the methods it answers.
RouteMethods = tuple[re.Pattern[str], frozenset[str]]

#: No script may run and nothing may load from elsewhere, whatever a feed managed to smuggle in.
CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
    "base-uri 'none'; frame-ancestors 'none'"
)


@dataclass
class WebContext:
    settings: Settings
    store: SqlStore
    crawler: Any
    templates: Jinja2Templates
    minutes: MinuteCache
    metrics: DirectoryMetrics
    #: Without a running crawler, the writing actions' one-off crawls take turns on it.
    crawl_turns: asyncio.Lock = field(default_factory=asyncio.Lock)


def ctx_of(request: Request) -> WebContext:
    ctx = request.app.state.fairfetch
    assert isinstance(ctx, WebContext)
    return ctx


def _templates() -> Jinja2Templates:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(_HERE / "templates")),
        autoescape=True,  # every value escaped, in every template, whatever its file name
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    filters.install(env)
    return Jinja2Templates(env=env)


class _SecurityHeaders(BaseHTTPMiddleware):
    async def dispatch(self, request: Request, call_next: RequestResponseEndpoint) -> Response:
        response = await call_next(request)
        response.headers.setdefault("Content-Security-Policy", CSP)
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        # same-origin, not no-referrer: nothing reaches other sites either way, and our own
        # posts then carry our Origin (no-referrer makes it "null", which a browser without
        # Sec-Fetch-Site would have refused in _require_own_page)
        response.headers.setdefault("Referrer-Policy", "same-origin")
        response.headers.setdefault("X-Frame-Options", "DENY")
        return response


class _HeadAsGet:
    """HEAD answered wherever GET is, with the GET's status and headers and no body.

    RFC 9110 §9.1 asks every general-purpose server for HEAD, and uptime monitors and link
    checkers ask with it; FastAPI routes declared GET answer HEAD with 405, which reads as
    "down". Only GET is ever run, so a HEAD can never reach a writing action.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD":
            await self.app(scope, receive, send)
            return

        async def headers_only(message: Message) -> None:
            if message["type"] == "http.response.body":
                if message.get("more_body", False):
                    return
                message = {"type": "http.response.body", "body": b"", "more_body": False}
            await send(message)

        await self.app({**scope, "method": "GET"}, receive, headers_only)


def _wants_html(request: Request) -> bool:
    path = request.url.path
    return not (path.startswith("/api/") or path in ("/metrics", "/feeds.opml"))


def _error_page(request: Request, status: int, message: str) -> Response:
    if not _wants_html(request):
        return JSONResponse({"detail": message}, status_code=status)
    ctx = ctx_of(request)
    return ctx.templates.TemplateResponse(
        request, "error.html", {"status": status, "message": message}, status_code=status
    )


def _body_refused(scope: Scope, message: str) -> Response:
    return _error_page(Request(scope), 413, message)


def _install_errors(app: FastAPI) -> None:
    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> Response:
        message = "bad request: " + "; ".join(_problem(err) for err in exc.errors())
        if not _wants_html(request):
            return JSONResponse(
                {"detail": message, "errors": _plain(exc.errors())}, status_code=422
            )
        return _error_page(request, 422, message)

    # Starlette's class, not FastAPI's subclass: the router's own 404 (no such path) and 405
    # (GET on a form action) are raised as Starlette's and would otherwise be bare JSON.
    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> Response:
        response = _error_page(request, exc.status_code, str(exc.detail))
        for k, v in (exc.headers or {}).items():
            response.headers[k] = v
        if exc.status_code == 405:
            response.headers["Allow"] = _allowed_methods(request)
        return response

    @app.exception_handler(NotFoundError)
    async def _not_found(request: Request, exc: NotFoundError) -> Response:
        return _error_page(request, 404, str(exc))

    @app.exception_handler(InputError)
    async def _input(request: Request, exc: InputError) -> Response:
        return _error_page(request, 422, str(exc))

    # The database refused or is unreachable (read-only, locked, down): the server cannot do
    # it now and may later, RFC 9110's 503; no gateway answered wrongly (502). The store's
    # message names what was refused, in one line; the class name tells a reader nothing.
    @app.exception_handler(StoreError)
    async def _store(request: Request, exc: StoreError) -> Response:
        message = " ".join(part.strip() for part in str(exc).splitlines() if part.strip())
        return _error_page(request, 503, message or "the database is unavailable")

    @app.exception_handler(FairfetchError)
    async def _ours(request: Request, exc: FairfetchError) -> Response:
        return _error_page(request, 502, f"{type(exc).__name__}: {exc}")


def _problem(err: dict[str, Any]) -> str:
    """One validation error as '<what>: <why>', naming the parameter or field, else the body.

    A body that is not JSON comes with its offset as the place ('1: JSON decode error'), and
    a body that is missing or not an object with no place at all."""
    loc = tuple(err.get("loc", ()))
    msg = str(err.get("msg", "invalid"))
    if err.get("type") == "json_invalid":
        reason = (err.get("ctx") or {}).get("error")
        at = next((p for p in loc[1:] if isinstance(p, int)), None)
        return (
            f"body: {msg}"
            + (f": {reason}" if reason else "")
            + (f" (at character {at + 1})" if at is not None else "")
        )
    where = ".".join(str(p) for p in loc if p not in ("query", "body", "path"))
    return f"{where or (str(loc[0]) if loc else 'request')}: {msg}"


def _allowed_methods(request: Request) -> str:
    """Every method the requested address answers, for the Allow of a 405 (RFC 9110 §15.5.6).

    The router names only the methods of the first route whose path matched: PUT on
    /api/v1/feeds said "Allow: GET", though POST adds a feed there. HEAD goes wherever GET does
    (_HeadAsGet).
    """
    path = request.scope.get("path", "")
    methods: set[str] = set()
    for regex, route_methods in request.app.state.fairfetch_routes:
        if regex.match(path):
            methods |= route_methods
    if "GET" in methods:
        methods.add("HEAD")
    return ", ".join(sorted(methods))


def _route_table(app: FastAPI, routers: list[tuple[str, APIRouter]]) -> list[RouteMethods]:
    """(path pattern, methods) of every route of the app, prefixes applied."""
    table: list[RouteMethods] = []
    routes = [("", r) for r in app.routes] + [
        (p, r) for p, router in routers for r in router.routes
    ]
    for prefix, route in routes:
        methods = getattr(route, "methods", None)
        path = getattr(route, "path", None)
        if methods and isinstance(path, str):
            table.append((compile_path(prefix + path)[0], frozenset(methods)))
        elif isinstance(route, Mount) and isinstance(route.app, StaticFiles):
            table.append((compile_path(route.path + "/{file:path}")[0], frozenset({"GET"})))
    return table


def _plain(value: Any) -> Any:
    """Validation error details made JSON-safe (they may hold exceptions and odd inputs)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items() if k != "ctx"}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return repr(value)


def create_app(settings: Settings, store: SqlStore, crawler: Any = None) -> FastAPI:
    """The directory app on ``store``; ``crawler`` is the running Crawler under ``run``."""
    from fairfetch.notify.routes import router as notify_router
    from fairfetch.web import api, pages
    from fairfetch.websub.routes import router as websub_router

    app = FastAPI(
        title="fairfetch directory",
        version="1",
        description="The feed directory of fairfetch: feeds, entries and crawl statistics. "
        "Reads are public; writing (add, refresh, delete) needs the admin token as a bearer token.",
        openapi_url="/api/v1/openapi.json",
        docs_url=None,  # Swagger UI loads scripts from a CDN; the document itself is enough
        redoc_url=None,
    )
    metrics = DirectoryMetrics(store, settings)
    app.state.fairfetch = WebContext(
        settings=settings,
        store=store,
        crawler=crawler,
        templates=_templates(),
        minutes=MinuteCache(),
        metrics=metrics,
    )
    metrics.start()
    app.add_middleware(BodyCap, limit=MAX_REQUEST_BODY, refuse=_body_refused)
    app.add_middleware(_SecurityHeaders)
    app.add_middleware(_HeadAsGet)
    _install_errors(app)
    routers = [
        ("", pages.router),
        ("/api/v1", api.router),
        ("", websub_router),
        ("", notify_router),
    ]
    for prefix, router in routers:
        app.include_router(router, prefix=prefix)
    app.mount("/static", StaticFiles(directory=str(_HERE / "static")), name="static")
    app.state.fairfetch_routes = _route_table(app, routers)
    return app


__all__ = ["CSP", "WebContext", "create_app", "ctx_of"]
