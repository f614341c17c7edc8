"""SQL of owner-paid feeds' credits (grants, the ledger) and of the development mail sink."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from fairfetch.store.notify_delivery import balances_in
from fairfetch.store.refusals import refused
from fairfetch.store.sql import SqlStore
from fairfetch.store.tables_notify import (
    notify_ledger,
    notify_publishers,
    notify_sink,
    notify_sponsorships,
)


@refused("granting credits to publisher {publisher!r}")
def grant(
    store: SqlStore,
    publisher: str,
    amount: int,
    now: datetime,
    *,
    feed_ids: Sequence[int] = (),
    note: str = "",
) -> dict[str, Any]:
    """Add credits to a publisher (created on first grant) and make it pay for these feeds."""
    with store.engine.begin() as conn:
        pid = conn.execute(
            sa.select(notify_publishers.c.id).where(notify_publishers.c.name == publisher)
        ).scalar()
        if pid is None:
            pid = conn.execute(
                notify_publishers.insert()
                .values(name=publisher, created_at=now)
                .returning(notify_publishers.c.id)
            ).scalar_one()
        if amount:
            conn.execute(
                notify_ledger.insert().values(
                    at=now, kind="grant", publisher_id=pid, amount=int(amount), note=note
                )
            )
        for fid in feed_ids:
            conn.execute(notify_sponsorships.delete().where(notify_sponsorships.c.feed_id == fid))
            conn.execute(
                notify_sponsorships.insert().values(feed_id=fid, publisher_id=pid, since=now)
            )
        bal = balances_in(conn, [pid])[pid]
    return {"publisher": publisher, "id": int(pid), "balance": bal}


@refused("reading the credit ledger")
def ledger(store: SqlStore) -> list[dict[str, Any]]:
    q = sa.select(notify_ledger).order_by(notify_ledger.c.id)
    with store.engine.connect() as conn:
        return [dict(r) for r in conn.execute(q).mappings()]


@refused("recording a mail in the sink")
def record_sink(
    store: SqlStore,
    *,
    received_at: datetime,
    mail_from: str,
    rcpt_to: str,
    subject: str,
    message_id: str,
    raw: str,
) -> None:
    with store.engine.begin() as conn:
        conn.execute(
            notify_sink.insert().values(
                received_at=received_at,
                mail_from=mail_from,
                rcpt_to=rcpt_to,
                subject=subject,
                message_id=message_id,
                raw=raw,
            )
        )


@refused("listing the mails in the sink")
def list_sink(store: SqlStore, *, limit: int = 100) -> list[dict[str, Any]]:
    q = sa.select(notify_sink).order_by(notify_sink.c.id.desc()).limit(limit)
    with store.engine.connect() as conn:
        return [dict(r) for r in conn.execute(q).mappings()]
