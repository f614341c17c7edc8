"""Politeness state that must outlive the process that learnt it.

A ``Retry-After`` is an instruction about a whole politeness key (a platform's hundreds of
hostnames are one key). The process told holds the key in memory; a cron ``crawl --once``, or
``run`` restarted within the hour, knew nothing of it and knocked again at once. The key's
``next_allowed_at`` kept here binds every process on the store. DESIGN.md's scale-out
``politeness_keys`` table adds the worker's lease columns to this one.
"""

from __future__ import annotations

import sqlalchemy as sa

from fairfetch.store.tables import metadata
from fairfetch.store.types import BindableText, UTCDateTime

politeness_keys = sa.Table(
    "politeness_keys",
    metadata,
    #: As ``feeds.politeness_key`` spells it (a registrable domain or ``backend:<name>``).
    sa.Column("key", BindableText, primary_key=True),
    #: No request on the key before this (the latest Retry-After any process was given).
    sa.Column("next_allowed_at", UTCDateTime, nullable=False, index=True),
)
