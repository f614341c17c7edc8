"""Tokens readers paste into the CLI must not look like options."""

from __future__ import annotations

from fairfetch.store.notify_subscriptions import new_token as _token


def test_no_token_starts_with_a_dash() -> None:
    # Without the guard one token in 64 starts with "-": 10,000 draws all miss it with
    # probability (63/64) ** 10_000, about 1e-69.
    tokens = [_token() for _ in range(10_000)]
    assert not [t for t in tokens if t.startswith("-")]
    assert len(set(tokens)) == len(tokens)
