"""The HTTP ``Link`` header (RFC 8288): what the feed crawl (WebSub hubs, ``self``) and the audit
(a canonical or hreflang alternates given in the header) read from it."""

from __future__ import annotations

import re
from typing import NamedTuple

__all__ = ["LinkValue", "parse_link_header"]


class LinkValue(NamedTuple):
    """One link of a ``Link`` header: its target as written, its ``rel`` tokens (lower-cased)
    and its other parameters (names lower-cased, quoted values unquoted)."""

    target: str
    rels: frozenset[str]
    params: dict[str, str]


# One link-value: <uri-reference> *( ";" link-param ). Quoted strings may hold ";" and ",".
# No "<" in a URI reference (RFC 3986): the target stops at one, so a header of "<" with no ">"
# is one pass, not a rescan to its end from every "<" (quadratic: a 64 KiB header, 30 s).
_QUOTED = r'"(?:[^"\\]|\\.)*"'
_LINK = re.compile(
    r"<([^<>]*)>((?:\s*;\s*[^;,\"=\s]+\s*(?:=\s*(?:" + _QUOTED + r"|[^;,\s]*))?)*)"
)
_PARAM = re.compile(r";\s*([^;,\"=\s]+)\s*(?:=\s*(" + _QUOTED + r"|[^;,\s]*))?")


def parse_link_header(value: str) -> list[LinkValue]:
    """Every link of a ``Link`` header value, in order; what is not one is skipped."""
    out: list[LinkValue] = []
    for m in _LINK.finditer(value or ""):
        rels: frozenset[str] | None = None
        params: dict[str, str] = {}
        for pm in _PARAM.finditer(m.group(2)):
            name, raw = pm.group(1).lower(), pm.group(2) or ""
            if raw.startswith('"'):
                raw = re.sub(r"\\(.)", r"\1", raw[1:-1])
            if name == "rel":
                if rels is None:  # RFC 8288 §3.3: a second rel is ignored
                    rels = frozenset(t.lower() for t in raw.split())
            else:
                params.setdefault(name, raw)
        out.append(LinkValue(m.group(1).strip(), rels or frozenset(), params))
    return out
