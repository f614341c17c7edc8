"""The Fetcher against servers that lie about their bodies' encodings, on 127.0.0.1 (raw bytes
written by hand: aiohttp's server will not produce these).

What must hold: a body is either decoded in full, within the cap, or the fetch fails as ``http``
naming the encoding — never compressed bytes or a cut-off prefix handed on as a success (the
parser would then record the server's fault as ``not_a_feed``/``parse``, or keep half a page).
"""

from __future__ import annotations

import gzip
import tracemalloc
import zlib

import pytest

from .conftest import fetch_raw

TEXT = (
    b"<rss><channel><title>t</title>" + b"<item><title>i</title></item>" * 200 + b"</channel></rss>"
)


# --- stacked and unknown encodings ---


@pytest.mark.parametrize(
    ("coding", "body"),
    [
        ("gzip, gzip", gzip.compress(gzip.compress(TEXT))),
        ("deflate, gzip", gzip.compress(zlib.compress(TEXT))),
        ("gzip,deflate", zlib.compress(gzip.compress(TEXT))),
        ("identity, gzip", gzip.compress(TEXT)),
        ("GZIP", gzip.compress(TEXT)),
    ],
    ids=["gzip-gzip", "deflate-gzip", "gzip-deflate", "identity-gzip", "GZIP"],
)
async def test_stacked_encodings_are_all_decoded(coding: str, body: bytes) -> None:
    r = await fetch_raw(b"HTTP/1.1 200 OK\r\nContent-Encoding: " + coding.encode(), body)
    assert r.error_kind is None, r.error_detail
    assert r.ok
    assert r.body == TEXT
    assert r.bytes_read == len(TEXT)


async def test_stacked_gzip_bomb_is_cut_off_at_the_cap() -> None:
    # gzip of a gzip bomb: the outer layer is small, the inner inflates to 64 MiB of zeros.
    inner = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    bomb = b"".join(inner.compress(b"\0" * (1 << 20)) for _ in range(64)) + inner.flush()
    r = await fetch_raw(
        b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip, gzip",
        gzip.compress(bomb),
        max_body_bytes=100_000,
    )
    assert r.error_kind == "too_large"
    assert r.body == b"\0" * 100_000


@pytest.mark.parametrize("coding", ["br", "zstd", "snappy", "compress", "gzip, br"])
async def test_an_encoding_we_did_not_ask_for_is_an_http_failure_naming_it(coding: str) -> None:
    head = b"HTTP/1.1 200 OK\r\nContent-Encoding: " + coding.encode()
    r = await fetch_raw(head, b"\x0b\x02\x80hi")
    assert not r.ok
    assert r.error_kind == "http"
    assert coding in r.error_detail
    assert r.status == 200


@pytest.mark.parametrize("coding", ["identity", ""])
async def test_identity_is_no_encoding(coding: str) -> None:
    r = await fetch_raw(b"HTTP/1.1 200 OK\r\nContent-Encoding: " + coding.encode(), TEXT)
    assert r.ok
    assert r.body == TEXT


# --- compressed bodies cut short ---


def _raw_deflate(data: bytes) -> bytes:
    c = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    return c.compress(data) + c.flush()


@pytest.mark.parametrize(
    ("coding", "body"),
    [
        ("gzip", gzip.compress(TEXT)[:-8]),  # the CRC and length trailer missing
        ("gzip", gzip.compress(TEXT)[: len(gzip.compress(TEXT)) // 2]),  # cut mid-stream
        ("gzip", gzip.compress(TEXT[:100]) + gzip.compress(TEXT[100:])[:30]),  # 2nd member cut
        ("deflate", zlib.compress(TEXT)[:-4]),
        ("deflate", _raw_deflate(TEXT)[:-3]),
        ("deflate", b"x"),  # one byte: not even a stream header
    ],
    ids=["gzip-no-trailer", "gzip-half", "gzip-2nd-member", "zlib", "raw-deflate", "one-byte"],
)
@pytest.mark.parametrize("length", [True, False], ids=["content-length", "until-close"])
async def test_a_compressed_body_cut_short_is_an_http_failure_not_a_partial_feed(
    coding: str, body: bytes, length: bool
) -> None:
    r = await fetch_raw(
        b"HTTP/1.1 200 OK\r\nContent-Encoding: " + coding.encode(), body, length=length
    )
    assert not r.ok
    assert r.error_kind == "http"
    assert "truncated" in r.error_detail


@pytest.mark.parametrize("coding", ["gzip", "deflate"])
async def test_an_empty_body_declared_compressed_is_an_empty_success(coding: str) -> None:
    r = await fetch_raw(b"HTTP/1.1 200 OK\r\nContent-Encoding: " + coding.encode(), b"")
    assert r.ok
    assert r.body == b""


async def test_stacked_bomb_keeps_memory_bounded() -> None:
    # The inner layer stored, not compressed (64 MiB of stored blocks), the outer one gzip:
    # ~100 KiB on the wire that would hold 64 MiB at each layer if either were unbounded.
    inner = zlib.compressobj(0, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    outer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    parts = [outer.compress(inner.compress(b"\0" * (1 << 20))) for _ in range(64)]
    body = b"".join(parts) + outer.compress(inner.flush()) + outer.flush()
    assert len(body) < 1 << 20
    cap = 1 << 20
    tracemalloc.start()
    try:
        r = await fetch_raw(
            b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip, gzip", body, max_body_bytes=cap
        )
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert r.error_kind == "too_large"
    assert len(r.body) == cap
    assert peak < 8 * cap, f"peak {peak} bytes"


# --- transfer codings other than chunked (aiohttp only undoes chunked) ---


def _chunked(data: bytes) -> bytes:
    return b"%x\r\n" % len(data) + data + b"\r\n0\r\n\r\n"


@pytest.mark.parametrize(
    ("te", "body", "length"),
    [
        ("gzip, chunked", _chunked(gzip.compress(TEXT)), False),
        ("gzip", gzip.compress(TEXT), False),  # the body ends with the connection
        ("deflate, chunked", _chunked(zlib.compress(TEXT)), False),
    ],
    ids=["gzip-chunked", "gzip-until-close", "deflate-chunked"],
)
async def test_a_gzip_transfer_coding_is_decoded(te: str, body: bytes, length: bool) -> None:
    r = await fetch_raw(
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: " + te.encode(), body, length=length
    )
    assert r.ok, r.error_detail
    assert r.body == TEXT


async def test_a_gzip_transfer_coding_over_a_gzip_content_coding_is_decoded_twice() -> None:
    body = _chunked(gzip.compress(gzip.compress(TEXT)))
    r = await fetch_raw(
        b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nTransfer-Encoding: gzip, chunked",
        body,
        length=False,
    )
    assert r.ok, r.error_detail
    assert r.body == TEXT


async def test_an_unknown_transfer_coding_is_an_http_failure_naming_it() -> None:
    r = await fetch_raw(
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: snappy, chunked",
        _chunked(b"\x00\x01"),
        length=False,
    )
    assert r.error_kind == "http"
    assert "snappy" in r.error_detail
