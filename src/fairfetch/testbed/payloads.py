"""Hostile and broken bodies. Built once and cached: the server must stay fast and small while
it hands them out (the gzip bomb inflates to a gigabyte but is built in a fraction of a second
from one repeated deflate block, and never exists inflated in memory)."""

from __future__ import annotations

import struct
import threading
import zlib
from functools import lru_cache

__all__ = [
    "BOMB_PREFIX", "entity_bomb", "gzip_bomb", "html_page", "huge_chunks", "malformed",
    "mis_encoded",
]

BOMB_PREFIX = (b'<?xml version="1.0" encoding="utf-8"?>\n<rss version="2.0"><channel>'
               b"<title>Inflate me</title><description>")
_CHUNK = 1 << 20
_lock = threading.Lock()


@lru_cache(maxsize=4)
def _gzip_bomb(size: int) -> bytes:
    # A full flush resets the deflate dictionary, so every 1 MiB block of spaces compresses to
    # the same bytes: compress one, repeat it. The gzip trailer needs the CRC of the inflated
    # data, which zlib.crc32 computes incrementally over the same block.
    filler = b" " * _CHUNK
    blocks, rest = divmod(max(size - len(BOMB_PREFIX), 0), _CHUNK)
    comp = zlib.compressobj(9, zlib.DEFLATED, -15)
    head = comp.compress(BOMB_PREFIX) + comp.flush(zlib.Z_FULL_FLUSH)
    block = comp.compress(filler) + comp.flush(zlib.Z_FULL_FLUSH)
    tail = comp.compress(filler[:rest]) + comp.flush(zlib.Z_FINISH)
    crc = zlib.crc32(BOMB_PREFIX)
    for _ in range(blocks):
        crc = zlib.crc32(filler, crc)
    crc = zlib.crc32(filler[:rest], crc)
    total = len(BOMB_PREFIX) + blocks * _CHUNK + rest
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"
    trailer = struct.pack("<II", crc & 0xFFFFFFFF, total & 0xFFFFFFFF)
    return header + head + block * blocks + tail + trailer


def gzip_bomb(size: int) -> bytes:
    """A gzip stream that inflates to ``size`` bytes (an RSS prefix, then spaces)."""
    with _lock:
        return _gzip_bomb(size)


def entity_bomb(base: str) -> bytes:
    """Billion laughs: ten levels of ten entity references; a feed otherwise readable."""
    levels = ['<!ENTITY lol "lol">']
    for i in range(1, 10):
        prev = "lol" if i == 1 else f"lol{i - 1}"
        levels.append(f'<!ENTITY lol{i} "' + f"&{prev};" * 10 + '">')
    doctype = "<!DOCTYPE rss [\n" + "\n".join(levels) + "\n]>\n"
    items = "".join(
        f"<item><title>Laugh {k}</title><link>{base}/p/{k}</link>"
        f"<guid>{base}/p/{k}</guid><description>Ha</description></item>\n"
        for k in range(3)
    )
    # The expansion comes after the items, so a hardened recovering parser still has them.
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n' + doctype
        + f'<rss version="2.0"><channel><title>Laughing</title><link>{base}/</link>'
        + "<description>An entity expansion bomb</description>\n" + items
        + "<item><title>The punchline</title><description>&lol9;</description></item>\n"
        + "</channel></rss>\n"
    ).encode()


def malformed(base: str) -> bytes:
    """Recoverable breakage: bare ampersands, an unclosed tag, a missing end of document."""
    items = "".join(
        f"<item><title>Fish & chips, part {k}</title><link>{base}/p/{k}</link>"
        f"<guid>{base}/p/{k}</guid><description>Tasty <b>bold & unclosed"
        f"</description><pubDate>Mon, 0{k + 1} Jun 2026 10:00:00 GMT</pubDate></item>\n"
        for k in range(3)
    )
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n<rss version="2.0"><channel>'
        f"<title>Bits & Pieces</title><link>{base}/</link>"
        "<description>Broken, but readable</description>\n" + items + "</channel>"
    ).encode()


def mis_encoded(base: str) -> bytes:
    """Declares UTF-8, is windows-1252 (smart quotes, an en dash, accented letters)."""
    text = (
        '<?xml version="1.0" encoding="utf-8"?>\n<rss version="2.0"><channel>'
        f"<title>Café “Crème” – Notes</title><link>{base}/</link>"
        "<description>Écrit à la main, naïvement</description>\n"
        + "".join(
            f"<item><title>Résumé nº{k} – “quoted”</title><link>{base}/p/{k}</link>"
            f"<guid>{base}/p/{k}</guid><description>Déjà vu … encore</description></item>\n"
            for k in range(3)
        )
        + "</channel></rss>\n"
    )
    return text.encode("windows-1252")


def html_page(base: str, title: str, feed_href: str | None) -> bytes:
    link = (f'<link rel="alternate" type="application/rss+xml" href="{base}{feed_href}">'
            if feed_href else "")
    return (
        f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{title}</title>{link}'
        f"</head><body><h1>{title}</h1><p>Welcome to our homepage.</p></body></html>\n"
    ).encode()


def huge_chunks(base: str, size: int) -> tuple[bytes, bytes, bytes, int, int]:
    """(head, item, tail, repeats, content_length) of an honest RSS feed of about ``size`` bytes."""
    head = (
        '<?xml version="1.0" encoding="utf-8"?>\n<rss version="2.0"><channel>'
        f"<title>Everything, always</title><link>{base}/</link><description>Huge</description>\n"
    ).encode()
    filler = ("All work and no play makes a very long feed. " * 1400)[:65000]
    item = (f"<item><title>Long</title><description>{filler}</description></item>\n").encode()
    tail = b"</channel></rss>\n"
    repeats = max(size // len(item) + 1, 1)
    return head, item, tail, repeats, len(head) + len(item) * repeats + len(tail)
