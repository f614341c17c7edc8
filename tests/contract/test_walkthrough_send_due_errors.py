"""``notify send-due`` names every failure, or says how many it did not print.

It printed the first 20 reasons and dropped the rest without a word: with 22 mails refused, the
text said 'failed 22' and listed 20, so two readers' failures were nowhere on the screen (a
failure must be loud, and one that is counted must be findable). Past 20 it now says how many
more there are and where to read them.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa

from fairfetch.notify.sink import LoopbackController
from fairfetch.store import open_store
from fairfetch.store.tables_notify import notify_outbox
from fairfetch.testing import Testbed

from .conftest import Cli


class _Refuses:
    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):  # type: ignore[no-untyped-def]
        return "550 5.1.1 No such user here"


@pytest.fixture
def refusing() -> Iterator[str]:
    controller = LoopbackController(_Refuses(), hostname="127.0.0.1", port=0)
    controller.start()
    try:
        yield f"smtp://127.0.0.1:{controller.port}"
    finally:
        controller.stop()


def test_walkthrough_send_due_says_how_many_failures_it_did_not_print(
    cli: Cli, tb: Testbed, db_url: str, refusing: str
) -> None:
    [spec] = tb.catalog(n=1, behaviours=["podcast"])
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))  # bound, not listening: every confirmation stays queued
        down = {"FAIRFETCH_SMTP_URL": f"smtp://127.0.0.1:{closed.getsockname()[1]}"}
        for n in range(22):
            r = cli("notify", "subscribe", f"reader{n}@example.test", spec.url, env=down)
            assert r.exit_code == 0, r.output
    store = open_store(db_url)
    try:  # the retries are due now, not in 30 s
        with store.engine.begin() as conn:
            conn.execute(sa.update(notify_outbox).values(
                due_at=datetime.now(UTC) - timedelta(minutes=1)))  # fmt: skip
    finally:
        store.close()
    r = cli("notify", "send-due", env={"FAIRFETCH_SMTP_URL": refusing,
                                       "FAIRFETCH_NOTIFY_RATE": "0"})  # fmt: skip
    assert r.exit_code == 0, (r.output, r.exception)
    lines = r.stdout.splitlines()
    assert lines[0].startswith("sent 0, retry later 0, failed 22"), r.stdout
    listed = [line for line in lines if "No such user" in line]
    assert len(listed) == 20, r.stdout
    assert "and 2 more" in r.stdout, r.stdout
    assert "notify outbox" in lines[-1], r.stdout
