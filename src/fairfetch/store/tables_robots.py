"""robots.txt copies kept between processes.

A cron-style ``crawl --once`` is a new process every run; without this table it would ask every
host for robots.txt again each time, a request per host that neither we nor the publisher need
inside the rules' 24 hours. Only answers that stand for a day are kept (``parsed`` rules and the
``allow_all`` of a 4xx); a throttled or unreachable robots.txt is a passing state and never
overwrites the last good copy, which is what stands in for it (the stale-copy rule in
``net/robots.py``).
"""

from __future__ import annotations

import sqlalchemy as sa

from fairfetch.store.tables import metadata
from fairfetch.store.types import BindableText, UTCDateTime

robots_txt = sa.Table(
    "robots_txt",
    metadata,
    #: scheme://host[:port], as ``RobotsCache.origin`` spells it.
    sa.Column("origin", BindableText, primary_key=True),
    #: ``parsed`` or ``allow_all``.
    sa.Column("state", BindableText, nullable=False),
    sa.Column("status", sa.Integer),
    #: The rules as fetched (at most RobotsCache.max_bytes); NULL for allow_all.
    sa.Column("body", BindableText),
    sa.Column("fetched_at", UTCDateTime, nullable=False, index=True),
)
