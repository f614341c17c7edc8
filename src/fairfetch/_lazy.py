"""Names a package exports but loads on first use (PEP 562 module ``__getattr__``).

Importing ``fairfetch`` (or its model, or a pure module of a subpackage) must not load the
parser, the HTTP client or the store into processes that never use them; each package says
where its lazy names live and gets its ``__getattr__`` from here.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_getattr"]


def lazy_getattr(package: str, where: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package``: ``where`` maps a name to its module."""

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module), name)

    return __getattr__
