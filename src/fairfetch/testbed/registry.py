"""Extension point: other parts of fairfetch plug host families into the testbed.

A *family* answers for a set of virtual hosts. It is any object with::

    name: str                                   # unique; registering the same name replaces it
    def matches(self, host: str) -> bool: ...   # host is lower-case, without the port
    async def handle(self, request: web.Request, host: str) -> web.StreamResponse: ...

and, optionally::

    platform: str | None                        # backend name, aggregated in stats["platforms"]
    def catalog(self, testbed: Testbed) -> Iterable[FeedSpec]: ...     # feeds it serves

Inside ``handle``, ``request.app[fairfetch.testbed.CONTEXT]`` is the running
:class:`~fairfetch.testbed.server.Testbed` (``seed``, ``clock``, ``base_port``,
``url(host, path)``), so a family can be deterministic from the seed and publish on the testbed
clock. Built-in hosts are routed first; families are asked in
registration order for any other host. The audit website (``testbed/site.py``) and the
YouTube-like WebSub hub (``testbed/youtube.py``) register themselves at import; the server imports
those modules when they exist.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from aiohttp import web

__all__ = ["PLUGIN_MODULES", "HostFamily", "families", "register", "unregister"]

#: Modules imported (when present) before a testbed starts, so their families register.
PLUGIN_MODULES = ("fairfetch.testbed.site", "fairfetch.testbed.youtube")


@runtime_checkable
class HostFamily(Protocol):
    name: str

    def matches(self, host: str) -> bool: ...

    async def handle(self, request: web.Request, host: str) -> web.StreamResponse: ...


_FAMILIES: dict[str, Any] = {}


def register(family: HostFamily) -> HostFamily:
    """Add (or replace, by ``name``) a family; returns it so it can be used as a decorator."""
    name = getattr(family, "name", None) or type(family).__name__
    _FAMILIES[name] = family
    return family


def unregister(name: str) -> None:
    _FAMILIES.pop(name, None)


def families() -> list[HostFamily]:
    """The registered families, in registration order."""
    return list(_FAMILIES.values())
