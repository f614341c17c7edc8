"""Bytes to UTF-8 bytes: which encoding a feed is really in.

Order of authority: a byte-order mark, then the HTTP charset, then the XML declaration, then
UTF-8 (RFC 7303 puts the transport first, and a BOM cannot be there by accident). A claim that the
bytes contradict is overruled, and the overruling is written in ``problems``: feeds declared
UTF-8 but written in Windows-1252 are common, and so are feeds declared ISO-8859-1 whose bytes are
UTF-8. Labels are read as browsers read them (``fairfetch.charsets``: ISO-8859-1 as
Windows-1252, since the C1 range is never meant; Shift_JIS as Windows-31J...).

HTML named entities (``&nbsp;``, ``&eacute;``), which XML does not define, are rewritten as
character references so they survive the entity-free parser. The document is handed to lxml as
UTF-8 bytes with the declaration overridden; pure-UTF-8 input (the common case) is not copied.
"""

from __future__ import annotations

import html.entities
import re
from collections.abc import Mapping

from fairfetch.charsets import bom_codec, charset_of, codec_for

__all__ = ["http_charset", "repair_references", "strip_doctype", "to_utf8"]

_DECL = re.compile(rb"""^\s*<\?xml[^>]*?encoding\s*=\s*["']([A-Za-z0-9._:\-]+)["']""")
_CONTROL_BYTES = bytes([*range(0, 9), 11, 12, *range(14, 32)])
_ENTITY = re.compile(rb"&([A-Za-z][A-Za-z0-9]{1,31});")
_XML_ENTITIES = frozenset({b"amp", b"lt", b"gt", b"quot", b"apos"})
_NON_ASCII_UTF8 = re.compile(rb"[\xc2-\xf4][\x80-\xbf]")

def _html_entity_ref(m: re.Match[bytes]) -> bytes:
    name = m.group(1)
    if name in _XML_ENTITIES:
        return m.group(0)
    text = html.entities.html5.get(name.decode("ascii") + ";")
    if text is None:
        # Not HTML's, and entities are never expanded here (a DTD's own are refused: billion
        # laughs, XXE): kept as the text it is. Left as a reference, recover mode dropped it
        # and every escape after it in the same text ("A &foo; B &amp; C" -> "A &foo; B  C").
        return b"&amp;" + name + b";"
    return "".join(f"&#{ord(c)};" for c in text).encode("ascii")


def http_charset(headers: Mapping[str, str] | None) -> str | None:
    if not headers:
        return None
    ctype = None
    for k, v in headers.items():
        if k.lower() == "content-type":
            ctype = v
            break
    if not ctype:
        return None
    return charset_of(ctype)


def _sniff_utf16(data: bytes) -> str | None:
    """UTF-16 without a BOM still starts with ``<`` as one byte and a NUL."""
    if data[:2] == b"<\x00":
        return "utf-16-le"
    if data[:2] == b"\x00<":
        return "utf-16-be"
    return None


def to_utf8(
    data: bytes, headers: Mapping[str, str] | None, *, trust_utf8: bool = False
) -> tuple[bytes, str, list[str]]:
    """UTF-8 bytes for the parser, the encoding they were read as, and what had to be fixed.

    With ``trust_utf8`` a document that claims (or defaults to) UTF-8 is not validated here:
    libxml2 validates it while parsing, and the caller starts over without the flag when the
    parser reports an encoding error. That keeps the common case to a single pass over the bytes.
    Control characters are likewise left to the caller on that path.
    """
    problems: list[str] = []
    bom, skip = bom_codec(data)
    if skip:
        data = data[skip:]
    wide = bom if bom and bom != "utf-8" else _sniff_utf16(data)
    if wide:
        text = data.decode(wide, errors="replace")
        data = text.encode("utf-8")
        if "\ufffd" in text:
            problems.append(f"invalid {wide} bytes replaced")
        chosen = wide
    else:
        candidates: list[tuple[str, str]] = []
        if bom:
            candidates.append((bom, "byte-order mark"))
        declared_http = http_charset(headers)
        if declared_http:
            enc = codec_for(declared_http)
            if enc:
                candidates.append((enc, "HTTP charset"))
            else:
                problems.append(f"unknown HTTP charset {declared_http!r}")
        m = _DECL.match(data[:200])
        if m:
            name = m.group(1).decode("ascii")
            enc = codec_for(name)
            if enc:
                candidates.append((enc, "XML declaration"))
            else:
                problems.append(f"unknown declared encoding {name!r}")
        candidates.append(("utf-8", "default"))
        chosen = ""
        first_enc, first_src = candidates[0]
        for enc, _src in candidates:
            if enc.startswith(("utf-16", "utf-32")):
                continue  # declared wide but the bytes are narrow: not that
            if enc == "utf-8":
                if not trust_utf8 and not _valid_utf8(data):
                    continue
                chosen = "utf-8"
                break
            if (enc == "cp1252" and _NON_ASCII_UTF8.search(data) and _valid_utf8(data)):
                # Declared Latin-1/ASCII, yet the bytes are well-formed UTF-8 with multi-byte
                # sequences: the declaration is a template default, the content is UTF-8.
                chosen = "utf-8"
                problems.append(f"{first_src} says {first_enc} but the content is utf-8")
                break
            chosen = enc
            break
        if not chosen:
            chosen = "cp1252"
        if chosen != first_enc and not problems:
            problems.append(f"{first_src} says {first_enc} but the content is {chosen}")
        if chosen != "utf-8":
            try:
                text = data.decode(chosen)
            except UnicodeDecodeError:
                text = data.decode(chosen, errors="replace")
                problems.append(f"invalid {chosen} bytes replaced")
            except LookupError:
                text = data.decode("utf-8", errors="replace")
            data = text.encode("utf-8")
    if not trust_utf8:
        data, removed = strip_controls(data)
        if removed:
            problems.append("control characters removed")
    return data, chosen, problems


def strip_controls(data: bytes) -> tuple[bytes, bool]:
    """Remove the C0 control characters XML forbids (libxml2 would stop or drop text at them)."""
    stripped = data.translate(None, _CONTROL_BYTES)
    return stripped, len(stripped) != len(data)


_REPAIR = re.compile(
    rb"<!\[CDATA\[.*?\]\]>|&([A-Za-z][A-Za-z0-9]{1,31});|&(?![A-Za-z][\w.\-]*;|#[0-9]+;|#x[0-9A-Fa-f]+;)",
    re.DOTALL,
)


def _repair(m: re.Match[bytes]) -> bytes:
    if m.group(1) is not None:
        return _html_entity_ref(m)
    if m.group(0) == b"&":
        return b"&amp;"
    return m.group(0)  # a CDATA section: its text is the publisher's, left as it is


def repair_references(data: bytes) -> bytes:
    """Outside CDATA: HTML named entities become character references and bare ampersands
    become ``&amp;``. Called only when the parser reported such errors, so valid feeds pay
    nothing."""
    return _REPAIR.sub(_repair, data)


# A character reference, and a second one right after it: the low half of a UTF-16 pair.
# CDATA sections, comments and processing instructions are matched whole, as libxml2 reads
# them, whichever opens first (a "<![CDATA[" inside a PI is the PI's text, and the references
# after the PI are parsed); one that never closes runs to the end, as it does for libxml2.
_CHAR_REFS = re.compile(
    rb"<!\[CDATA\[.*?(?:\]\]>|\Z)|<!--.*?(?:-->|\Z)|<\?.*?(?:\?>|\Z)"
    rb"|&#(?:x([0-9A-Fa-f]{1,8})|([0-9]{1,10}));"
    rb"(?:&#(?:x([0-9A-Fa-f]{1,8})|([0-9]{1,10}));)?",
    re.DOTALL,
)
# The same references wherever they are.
_ALL_CHAR_REFS = re.compile(
    rb"&#(?:x([0-9A-Fa-f]{1,8})|([0-9]{1,10}));(?:&#(?:x([0-9A-Fa-f]{1,8})|([0-9]{1,10}));)?")


def _code_point(hex_digits: bytes | None, digits: bytes | None) -> int:
    return int(hex_digits, 16) if hex_digits is not None else int(digits or b"0")


def _unencodable(n: int) -> bool:
    return 0xD800 <= n <= 0xDFFF or n > 0x10FFFF


def _fix_char_ref(m: re.Match[bytes]) -> bytes:
    whole = m.group(0)
    if m.group(1) is None and m.group(2) is None:
        return whole  # CDATA, a comment or a PI: its text is the publisher's, left as it is
    first = _code_point(m.group(1), m.group(2))
    if m.group(3) is None and m.group(4) is None:
        return b"&#xFFFD;" if _unencodable(first) else whole
    second = _code_point(m.group(3), m.group(4))
    if 0xD800 <= first <= 0xDBFF and 0xDC00 <= second <= 0xDFFF:
        return b"&#x%X;" % (0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00))
    cut = whole.index(b";") + 1  # libxml2 reads (or reports) the encodable ones itself
    return ((b"&#xFFFD;" if _unencodable(first) else whole[:cut])
            + (b"&#xFFFD;" if _unencodable(second) else whole[cut:]))


def fix_char_refs(data: bytes, everywhere: bool = False) -> tuple[bytes, bool]:
    """Character references to UTF-16 surrogates or past U+10FFFF, outside CDATA: a high and
    low surrogate pair (JavaScript's escaping of an emoji) becomes the character it encodes,
    anything else U+FFFD. libxml2 in recover mode stores such a reference as bytes no UTF-8
    decoder accepts, so one of them in a title would otherwise cost the whole feed.
    ``everywhere``: in CDATA sections, comments and PIs too (for a document whose markup
    libxml2 recovered otherwise than this scan reads it). Returns (data, changed)."""
    if b"&#" not in data:
        return data, False
    fixed = (_ALL_CHAR_REFS if everywhere else _CHAR_REFS).sub(_fix_char_ref, data)
    return fixed, fixed != data


#: A DOCTYPE whose quoted literals may hold '>' or '[' ("SYSTEM 'a>b'"), with its internal
#: subset; the subset ends at the first "]" that closes it with ">". A literal holds no '<':
#: an unclosed quote must not run on to a quote in the feed ("Bob's blog") and take the root
#: element with it.
_DOCTYPE = re.compile(
    rb"""<!DOCTYPE\s(?:[^\[>"']|"[^"<]*"|'[^'<]*')*(?:\[.*?\]\s*)?>""",
    re.DOTALL | re.IGNORECASE,
)
#: The same, reading quotes as plain characters: for a DOCTYPE the first cannot match (an
#: unbalanced quote), which must go all the same.
_DOCTYPE_LOOSE = re.compile(rb"<!DOCTYPE\s[^\[>]*(?:\[.*?\]\s*)?>", re.DOTALL | re.IGNORECASE)


def _doctype_start(data: bytes) -> int:
    """Where the DOCTYPE begins, or -1: looked for in the prolog only (whitespace, the XML
    declaration, comments, processing instructions: however long), never past the root
    element's start. A fixed window let a bomb through behind a 5 KB comment."""
    pos = 0
    while True:
        i = data.find(b"<", pos)
        if i < 0:
            return -1
        if data.startswith(b"<?", i):
            end = data.find(b"?>", i + 2)
            after = data.find(b"<", i + 2)
            if end < 0 or 0 <= after < end:
                # No "?>" before the next markup ('<?xml version="1.0">'): libxml2 recovers
                # at the first '>', and reads a DTD after it; so does this scan.
                gt = data.find(b">", i + 2)
                if gt < 0:
                    return -1
                pos = gt + 1
                continue
            pos = end + 2
        elif data.startswith(b"<!--", i):
            end = data.find(b"-->", i + 4)
            if end < 0:
                return -1
            pos = end + 3
        elif data.startswith(b"<!", i) and data[i + 2:i + 9].upper() == b"DOCTYPE":
            return i
        else:
            return -1  # the root element (or markup that is no prolog): no DOCTYPE after it


def strip_doctype(data: bytes) -> tuple[bytes, bool]:
    """Remove the DOCTYPE (and its internal subset). Feeds need no DTD; entity declarations
    are how billion-laughs and external-entity attacks arrive. Returns (data, had entities)."""
    start = _doctype_start(data)
    if start < 0:
        return data, False
    m = _DOCTYPE.match(data, start) or _DOCTYPE_LOOSE.match(data, start)
    if not m:
        return data, False
    return data[:start] + data[m.end():], b"<!ENTITY" in m.group(0)


def _valid_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True
