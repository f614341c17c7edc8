"""Which encoding an HTML page is in, in the HTML Standard's order of authority.

A byte-order mark, then the HTTP charset, then a ``<meta>`` charset within the first 1024 bytes
(the Standard's prescan), else UTF-8 when the bytes are UTF-8 and Windows-1252 when they are not
(what browsers fall back to for most of the web's legacy pages). Labels are read as browsers read
them (``fairfetch.charsets``). A <meta> cannot declare UTF-16 (the bytes it is written in are
ASCII-compatible): such a claim means UTF-8, as the Standard says.

The parser is given UTF-8 bytes: a page already in UTF-8, the common case, is not copied.
"""

from __future__ import annotations

import re

from fairfetch.charsets import bom_codec, charset_of, codec_for

__all__ = ["html_as_utf8"]

_META_CHARSET = re.compile(
    rb"""<meta\s[^>]*?charset\s*=\s*["']?\s*([A-Za-z0-9._:\-]+)""", re.IGNORECASE
)
_UTF8 = frozenset({"utf-8", "utf_8"})


def _declared(body: bytes, content_type: str | None) -> str | None:
    """The codec the HTTP charset, else the <meta> prescan, names (None: nothing usable)."""
    label = charset_of(content_type) if content_type else None
    codec = codec_for(label) if label else None
    if codec is not None:
        return codec
    m = _META_CHARSET.search(body, 0, 1024)
    if m is None:
        return None
    codec = codec_for(m.group(1).decode("ascii"))
    if codec is not None and codec.startswith("utf-16"):
        return "utf-8"
    return codec


def html_as_utf8(body: bytes, content_type: str | None) -> bytes:
    """``body`` as UTF-8 bytes, read in the encoding a browser would read it in."""
    codec, skip = bom_codec(body)
    if codec is None:
        codec = _declared(body, content_type)
    if codec is None:
        try:
            body.decode("utf-8")
        except UnicodeDecodeError:
            codec = "cp1252"
        else:
            return body
    if codec in _UTF8:
        # Invalid bytes become U+FFFD in the parser, as in a browser.
        return body[skip:] if skip else body
    return body[skip:].decode(codec, errors="replace").encode("utf-8")
