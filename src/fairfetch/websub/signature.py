"""Authenticated content distribution (WebSub §7.1 / §8): is this delivery signed by our hub?

Pure: no I/O. The verdict decides whether the payload may be processed at all, so every way a
delivery can fail to prove itself (no header, a malformed one, an algorithm we do not know, a
wrong digest) has its own verdict and is counted, never silently folded into "ok".
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from enum import StrEnum

__all__ = ["ALGORITHMS", "Verdict", "check_signature", "new_secret", "sign"]

#: The algorithms WebSub names. sha1 is weak but the spec allows it and some hubs still use it.
ALGORITHMS = {
    "sha1": hashlib.sha1,
    "sha256": hashlib.sha256,
    "sha384": hashlib.sha384,
    "sha512": hashlib.sha512,
}


class Verdict(StrEnum):
    VALID = "valid"
    #: A secret was set but the hub sent no signature: reject (non-2xx), per the issue.
    UNSIGNED = "unsigned"
    #: The digest does not match, or the header is malformed: do not process.
    INVALID = "invalid"
    #: An algorithm outside ALGORITHMS: do not process (we cannot check it, so it proves nothing).
    UNKNOWN_ALGORITHM = "unknown_algorithm"
    #: No secret was set for this subscription: nothing to check.
    NOT_REQUIRED = "not_required"

    @property
    def processable(self) -> bool:
        return self in (Verdict.VALID, Verdict.NOT_REQUIRED)


def new_secret() -> str:
    """A fresh secret per subscription: 32 random bytes as 43 URL-safe characters (< 200 bytes)."""
    return secrets.token_urlsafe(32)


def sign(secret: str, body: bytes, algorithm: str = "sha512") -> str:
    """The X-Hub-Signature value a hub would send (used by our test hubs)."""
    digest = hmac.new(secret.encode("utf-8"), body, ALGORITHMS[algorithm]).hexdigest()
    return f"{algorithm}={digest}"


def check_signature(secret: str | None, header: str | None, body: bytes) -> Verdict:
    """Check ``X-Hub-Signature: method=signature`` over the raw body, in constant time."""
    if not secret:
        return Verdict.NOT_REQUIRED
    if header is None or not header.strip():
        return Verdict.UNSIGNED
    method, sep, given = header.strip().partition("=")
    if not sep:
        return Verdict.INVALID
    algo = ALGORITHMS.get(method.strip().lower())
    if algo is None:
        return Verdict.UNKNOWN_ALGORITHM
    expected = hmac.new(secret.encode("utf-8"), body, algo).hexdigest()
    # compare_digest on bytes: ASCII-only inputs are required for str, and a hostile header may
    # carry anything.
    if hmac.compare_digest(expected.encode("ascii"), given.strip().lower().encode("utf-8")):
        return Verdict.VALID
    return Verdict.INVALID
