"""Times in the text views are ISO 8601 UTC, spelled as ``--json`` spells them (``…Z``).

``stats`` printed the queue's oldest due time as Python prints a datetime
(``2026-11-30 17:57:29.795649+00:00``) and ``notify outbox`` its due times with no zone at all
(``2026-11-30 17:48``), so a reader east or west of Greenwich could take them for local time;
``feeds show`` and ``websub list`` already said ``Z``.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from fairfetch.cli import app
from fairfetch.store import open_store


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    url = f"sqlite:///{tmp_path}/times.db"
    monkeypatch.setenv("FAIRFETCH_DB", url)
    # Nothing listens on the discard port: confirmation mails stay queued, nothing leaves.
    monkeypatch.setenv("FAIRFETCH_SMTP_URL", "smtp://127.0.0.1:9")
    return url


def _ok(*args: str) -> Result:
    r = CliRunner().invoke(app, list(args))
    assert r.exit_code == 0, (args, r.output, r.exception)
    return r


def test_walkthrough_stats_text_names_the_oldest_due_in_utc(db: str) -> None:
    store = open_store(db)
    try:
        # added five minutes ago and due since: the queue's oldest overdue feed
        added = datetime.now(UTC) - timedelta(minutes=5)
        store.add_feed("http://late.example.test/feed", now=added, politeness_key="example.test")
    finally:
        store.close()
    oldest = _ok("stats", "--json")
    due = json.loads(oldest.stdout)["queue"]["oldest_due_at"]
    assert due.endswith("Z"), due
    out = _ok("stats").stdout
    found = re.search(r"oldest due (\S+),", out)
    assert found, out
    assert found.group(1) == due[:19] + "Z", out


def test_walkthrough_notify_outbox_text_due_is_utc(db: str) -> None:
    _ok("notify", "subscribe", "r@example.test", "http://feed.example.test/feed.xml")
    [row] = json.loads(_ok("notify", "outbox", "--json").stdout)
    due = row["due_at"]
    assert due.endswith("Z"), due
    out = _ok("notify", "outbox").stdout
    # to the minute, in the --json spelling; folded if the column is narrow
    flat = "".join(
        line.split("│")[5].strip() for line in out.splitlines() if line.count("│") == 8
    )
    assert flat == due[:16] + "Z", out
