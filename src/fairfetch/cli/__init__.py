"""The ``fairfetch`` command: parses arguments, calls services, prints. No logic lives here.

Each job keeps its commands in its own module (``_feeds``, ``_crawl``, ``_audit``, ``_notify``,
``_web``, ``_testbed``); this module assembles them under one Typer app.
"""

from __future__ import annotations

from fairfetch.cli import _audit, _crawl, _feeds, _notify, _testbed, _web, _websub  # noqa: F401
from fairfetch.cli._app import app, main

__all__ = ["app", "main"]
