"""Notifier knobs that are not (yet) fields of :class:`fairfetch.config.Settings`.

Each has a documented default and an environment variable, so a subprocess (``notify send-due``)
and the crawler's in-transaction hook read the same values.

- ``FAIRFETCH_NOTIFY_RATE`` — messages per second to the SMTP server (default 20; 0 = no limit).
  Providers throttle; after an outage the backlog drains at this pace, oldest first.
- ``FAIRFETCH_NOTIFY_BATCH`` — outbox rows claimed per pass (default 200).
- ``FAIRFETCH_NOTIFY_SMTP_TIMEOUT`` — seconds per SMTP command (default 30).
- ``FAIRFETCH_NOTIFY_BEHIND_NEWEST_DAYS`` — republish guard: an entry published more than this
  many days before the feed's newest is not news (default 7; empty = off).
- ``FAIRFETCH_NOTIFY_MAX_AGE_DAYS`` — an entry published more than this many days before it was
  first seen is not news (default 14; empty = off).
- ``FAIRFETCH_NOTIFY_POLL`` — seconds between passes of ``run_forever`` (default 15).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta

from fairfetch.errors import ConfigError
from fairfetch.notify.newness import NewnessLimits

__all__ = ["NotifyOptions"]


def _num(env: Mapping[str, str], key: str, default: float | None) -> float | None:
    raw = env.get(key)
    if raw is None:
        return default
    if not raw.strip():
        return None
    try:
        return float(raw)
    except ValueError:
        raise ConfigError(f"{key}={raw!r} is not a number") from None


@dataclass(frozen=True)
class NotifyOptions:
    rate: float = 20.0
    batch: int = 200
    smtp_timeout: float = 30.0
    poll_seconds: float = 15.0
    newness: NewnessLimits = field(default_factory=NewnessLimits)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> NotifyOptions:
        env = os.environ if environ is None else environ
        behind = _num(env, "FAIRFETCH_NOTIFY_BEHIND_NEWEST_DAYS", 7)
        max_age = _num(env, "FAIRFETCH_NOTIFY_MAX_AGE_DAYS", 14)
        return cls(
            rate=_num(env, "FAIRFETCH_NOTIFY_RATE", 20.0) or 0.0,
            batch=int(_num(env, "FAIRFETCH_NOTIFY_BATCH", 200) or 200),
            smtp_timeout=_num(env, "FAIRFETCH_NOTIFY_SMTP_TIMEOUT", 30.0) or 30.0,
            poll_seconds=_num(env, "FAIRFETCH_NOTIFY_POLL", 15.0) or 15.0,
            newness=NewnessLimits(
                behind_newest=timedelta(days=behind) if behind is not None else None,
                max_age=timedelta(days=max_age) if max_age is not None else None,
            ),
        )
