"""Mail for ``make demo``: a local SMTP sink and two demo readers, so a newcomer sees
notifications flow from the simulated web to /outbox without configuring anything.

The demo's ``run`` calls :func:`demo_mail` after adding the testbed feeds and before its first
crawl (the first crawl records each feed's backlog; later crawls find new items and mail them),
then runs :func:`fairfetch.notify.service.run_forever` with the settings it returns.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from fairfetch.config import Settings
from fairfetch.notify.sink import MailSink
from fairfetch.store import notify_repo as repo
from fairfetch.store.sql import SqlStore

__all__ = ["DEMO_READERS", "demo_mail"]

#: a reader who gets every new item as it comes, and one who gets a daily digest
DEMO_READERS = ("newcomer@demo.test", "digest-reader@demo.test")


def demo_mail(
    store: SqlStore,
    settings: Settings,
    feed_ids: Sequence[int],
    *,
    port: int = 0,
    now: datetime | None = None,
) -> tuple[MailSink, Settings]:
    """Start a sink on 127.0.0.1 (``port``, 0 = any) that stores mails for /outbox, subscribe the
    demo readers (already confirmed: they are ours) to ``feed_ids``, and return the sink and the
    settings pointing at it. Stop the sink with ``sink.stop()``."""
    sink = MailSink(store, port=port).start()
    at = now or datetime.now(UTC)
    rows: list[dict[str, object]] = []
    for fid in feed_ids:
        rows.append({"email": DEMO_READERS[0], "feed_id": fid})
        rows.append({"email": DEMO_READERS[1], "feed_id": fid, "mode": "daily",
                     "hour": (at.hour + 1) % 24})
    repo.import_subscriptions(store, rows, at)
    return sink, settings.replace(smtp_url=sink.smtp_url)
