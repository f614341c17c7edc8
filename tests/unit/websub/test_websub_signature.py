"""Signature checks: each algorithm the spec names, each way a delivery fails to prove itself."""

from __future__ import annotations

import hashlib
import hmac

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fairfetch.websub.signature import ALGORITHMS, Verdict, check_signature, new_secret, sign

BODY = b"<feed>raw bytes, not re-encoded</feed>"


@pytest.mark.parametrize("algo", ["sha1", "sha256", "sha384", "sha512"])
def test_websub_valid_signature_each_algorithm(algo: str) -> None:
    digest = hmac.new(b"s3cret", BODY, getattr(hashlib, algo)).hexdigest()
    assert check_signature("s3cret", f"{algo}={digest}", BODY) is Verdict.VALID


@pytest.mark.parametrize("algo", ["sha1", "sha256", "sha384", "sha512"])
def test_websub_wrong_secret_is_invalid(algo: str) -> None:
    assert check_signature("other", sign("s3cret", BODY, algo), BODY) is Verdict.INVALID


def test_websub_signature_is_over_raw_body() -> None:
    header = sign("s3cret", BODY)
    assert check_signature("s3cret", header, BODY + b"\n") is Verdict.INVALID
    assert check_signature("s3cret", header, BODY) is Verdict.VALID


def test_websub_unknown_algorithm_not_processable() -> None:
    digest = hmac.new(b"s3cret", BODY, hashlib.md5).hexdigest()
    verdict = check_signature("s3cret", f"md5={digest}", BODY)
    assert verdict is Verdict.UNKNOWN_ALGORITHM
    assert not verdict.processable


@pytest.mark.parametrize("header", [None, "", "   "])
def test_websub_unsigned_when_secret_sent(header: str | None) -> None:
    verdict = check_signature("s3cret", header, BODY)
    assert verdict is Verdict.UNSIGNED
    assert not verdict.processable


def test_websub_no_secret_needs_no_signature() -> None:
    assert check_signature(None, None, BODY) is Verdict.NOT_REQUIRED
    assert Verdict.NOT_REQUIRED.processable


@pytest.mark.parametrize("header", ["sha512", "sha512=", "=abc", "sha512=zz\u00e9", "sha512 abc"])
def test_websub_malformed_headers_invalid(header: str) -> None:
    assert not check_signature("s3cret", header, BODY).processable


def test_websub_uppercase_algorithm_and_digest_accepted() -> None:
    algo, digest = sign("s3cret", BODY, "sha256").split("=")
    assert check_signature("s3cret", f"{algo.upper()}={digest.upper()}", BODY) is Verdict.VALID


def test_websub_new_secret_fresh_and_short() -> None:
    secrets = {new_secret() for _ in range(50)}
    assert len(secrets) == 50
    assert all(len(s.encode()) < 200 for s in secrets)


@given(body=st.binary(max_size=512), secret=st.text(min_size=1, max_size=40),
       algo=st.sampled_from(sorted(ALGORITHMS)))
def test_websub_sign_check_roundtrip(body: bytes, secret: str, algo: str) -> None:
    assert check_signature(secret, sign(secret, body, algo), body) is Verdict.VALID
    assert check_signature(secret, sign(secret, body + b"x", algo), body) is Verdict.INVALID
