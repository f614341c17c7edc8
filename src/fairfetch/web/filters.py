"""Jinja2 filters and globals for the directory templates (formatting and link safety)."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode

import jinja2
from markupsafe import Markup

from fairfetch.web.safety import plain_text, safe_url, sanitize_html, web_base


def dt(value: datetime | None) -> str:
    if value is None:
        return "—"
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def ago(value: datetime | None, now: datetime | None = None) -> str:
    """ "3 min ago" / "in 2 h": how a person reads a schedule."""
    if value is None:
        return ""
    now = now or datetime.now(UTC)
    seconds = (value - now).total_seconds()
    span = abs(seconds)
    if span < 60:
        text = f"{int(span)} s"
    elif span < 3600:
        text = f"{int(span // 60)} min"
    elif span < 86400 * 2:
        text = f"{span / 3600:.1f} h"
    else:
        text = f"{int(span // 86400)} days"
    return f"in {text}" if seconds > 0 else f"{text} ago"


def nbytes(value: int | float | None) -> str:
    n = float(value or 0)
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"


def sanitize(value: Any, *bases: Any) -> Markup:
    """Feed HTML, cleaned by nh3 (the only place a feed's markup reaches a page); its relative
    links resolved against the first of ``bases`` that is a web address (the publisher's)."""
    base = next((b for b in map(web_base, bases) if b is not None), None)
    return Markup(sanitize_html(value, base))  # noqa: S704 - nh3 output is the sanitised HTML


#: A language tag as feeds write them (RFC 5646's shape, "en-us"; "pt_BR" read as "pt-BR").
_LANG_TAG = re.compile(r"[A-Za-z]{2,3}(?:-[A-Za-z0-9]{1,8}){0,4}")


def lang_tag(value: Any) -> str | None:
    """The feed's declared language as a ``lang`` attribute value, or None when it is no tag.

    The feed's own text then carries it (WCAG 3.1.2): a screen reader reads a Russian title
    with a Russian voice instead of the page's English one.
    """
    if not isinstance(value, str):
        return None
    text = value.strip().replace("_", "-")
    return text if _LANG_TAG.fullmatch(text) else None


def query(params: dict[str, Any], **changes: Any) -> str:
    """A query string from ``params`` with ``changes`` applied (None drops a key)."""
    merged = {k: v for k, v in {**params, **changes}.items() if v not in (None, "")}
    return "?" + urlencode(merged) if merged else "?"


def install(env: jinja2.Environment) -> None:
    env.filters.update(dt=dt, ago=ago, nbytes=nbytes, sanitize=sanitize, plain=plain_text)
    env.globals.update(safe_url=safe_url, query=query, lang_tag=lang_tag)
