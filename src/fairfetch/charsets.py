"""Charset labels as the web writes them, read the way browsers read them.

Shared by the feed parser (XML) and the site audit (HTML). The WHATWG Encoding Standard maps
several labels to a superset of what they name, because that is what the bytes on the web are:
"ISO-8859-1" and "US-ASCII" are read as Windows-1252 (the C1 range is never meant), "Shift_JIS"
as Windows-31J, "EUC-KR" as Windows-949, "GB2312" and "GBK" as GB18030. Text valid in the
named charset decodes the same either way; text using the superset's extra characters (NEC and
IBM kanji, curly quotes) no longer turns into U+FFFD.
"""

from __future__ import annotations

import codecs
import re
from functools import lru_cache

__all__ = ["bom_codec", "charset_of", "codec_for"]

_CHARSET = re.compile(r"""charset\s*=\s*["']?([A-Za-z0-9._:\-]+)""", re.IGNORECASE)

#: Python codec name (as ``codecs.lookup`` spells it) -> the codec browsers use for it.
_SUPERSETS = {
    "iso8859-1": "cp1252",
    "ascii": "cp1252",
    "shift_jis": "cp932",
    "euc_kr": "cp949",
    "gb2312": "gb18030",
    "gbk": "gb18030",
    "iso8859-9": "cp1254",
    "iso8859-11": "cp874",
    "tis-620": "cp874",
    "big5": "big5hkscs",
}


@lru_cache(maxsize=256)  # a handful of Content-Type values across a whole crawl
def charset_of(content_type: str) -> str | None:
    """The ``charset`` parameter of a Content-Type value (lower case), or None."""
    m = _CHARSET.search(content_type)
    return m.group(1).lower() if m else None


@lru_cache(maxsize=256)
def codec_for(label: str) -> str | None:
    """The Python codec to decode text labelled ``label`` with, or None for a label no codec
    reads (an unknown name, or a binary transform such as ``base64`` that is not text)."""
    try:
        info = codecs.lookup(label)
    except LookupError:
        return None
    if not getattr(info, "_is_text_encoding", True):
        return None  # base64, rot13, zlib...: codecs, not charsets
    return _SUPERSETS.get(info.name, info.name)


def bom_codec(data: bytes) -> tuple[str | None, int]:
    """(codec, bytes to skip) named by a byte-order mark at the start of ``data``, or
    (None, 0). The wide codecs are named without an order, so they read the mark themselves
    (nothing to skip); UTF-8's mark is skipped."""
    if data.startswith(codecs.BOM_UTF8):
        return "utf-8", 3
    if data.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)):
        return "utf-32", 0
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16", 0
    return None, 0
