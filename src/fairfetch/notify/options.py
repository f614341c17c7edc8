"""The notifier's knobs, read off :class:`fairfetch.config.Settings`.

They are Settings fields like every other (``notify_rate``, ``notify_batch``,
``notify_smtp_timeout``, ``notify_poll``, ``notify_behind_newest_days``, ``notify_max_age_days``,
``notify_policy_give_up_days``;
documented with their defaults in ``config.py``), so they come from the config file, the
environment (``FAIRFETCH_NOTIFY_RATE`` …) or flags. Where a Settings is at hand, build the options
with :meth:`NotifyOptions.from_settings`. The crawler hands its Settings to the in-transaction
outbox hook with each write; a caller that writes entries without any (a script using the store
directly) gets :meth:`NotifyOptions.from_env`, the same names read from the environment through
``load_settings`` — one parser, one set of defaults, whichever path a value takes.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta

from fairfetch.config import Settings, env_name, load_settings
from fairfetch.notify.backoff import POLICY_GIVE_UP_AFTER
from fairfetch.notify.newness import NewnessLimits

__all__ = ["NOTIFY_SETTINGS", "NotifyOptions"]

#: The Settings fields the notifier reads.
NOTIFY_SETTINGS = (
    "notify_rate",
    "notify_batch",
    "notify_smtp_timeout",
    "notify_poll",
    "notify_behind_newest_days",
    "notify_max_age_days",
    "notify_policy_give_up_days",
)


def _days(value: float | None) -> timedelta | None:
    return timedelta(days=value) if value is not None else None


@dataclass(frozen=True)
class NotifyOptions:
    rate: float = 20.0
    batch: int = 200
    smtp_timeout: float = 30.0
    poll_seconds: float = 15.0
    newness: NewnessLimits = field(default_factory=NewnessLimits)
    #: how long a 5xx refusal of ours by policy is retried before the mail fails for good
    #: (``notify_policy_give_up_days``; see backoff.POLICY_GIVE_UP_AFTER for why 3 days)
    policy_give_up_after: timedelta = POLICY_GIVE_UP_AFTER

    @classmethod
    def from_settings(cls, settings: Settings) -> NotifyOptions:
        return cls(
            rate=max(settings.notify_rate, 0.0),
            batch=settings.notify_batch if settings.notify_batch > 0 else 200,
            smtp_timeout=settings.notify_smtp_timeout or 30.0,
            poll_seconds=settings.notify_poll or 15.0,
            newness=NewnessLimits(
                behind_newest=_days(settings.notify_behind_newest_days),
                max_age=_days(settings.notify_max_age_days),
            ),
            policy_give_up_after=timedelta(days=settings.notify_policy_give_up_days),
        )

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> NotifyOptions:
        """The same settings, from the environment only (for code that has no Settings).

        Only the notifier's variables are read, so an unrelated bad variable cannot fail the
        transaction that writes a crawl's entries.
        """
        env = os.environ if environ is None else environ
        names = {env_name(n) for n in NOTIFY_SETTINGS}
        return cls.from_settings(
            load_settings(environ={k: v for k, v in env.items() if k in names})
        )
