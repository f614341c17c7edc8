"""``feeds show`` as text never cuts a value: in a pipe or an 80-column terminal a YouTube
channel feed's own URL showed as ``http://www.youtube.test:8999/feeds/videos.xml?channel_id=…``
(url, original_url, self_url, and inside websub and authors), so the one thing the view is
about could be neither read nor copied. Values are folded, as the tables of ``feeds list`` fold
their URLs."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fairfetch.cli import app
from fairfetch.store import open_store

LONG = "http://www.youtube.example.test/feeds/videos.xml?channel_id=UC" + "Zx9" * 30


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    url = f"sqlite:///{tmp_path}/show.db"
    monkeypatch.setenv("FAIRFETCH_DB", url)
    monkeypatch.delenv("COLUMNS", raising=False)
    store = open_store(url)
    try:
        store.add_feed(LONG, now=datetime.now(UTC), politeness_key="example.test")
    finally:
        store.close()
    return url


def test_walkthrough_feeds_show_text_folds_long_urls_instead_of_cutting_them(db: str) -> None:
    r = CliRunner().invoke(app, ["feeds", "show", LONG])  # 80 columns, as in a pipe
    assert r.exit_code == 0, (r.output, r.exception)
    assert "…" not in r.stdout, r.stdout
    lines = r.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[:1] == ["url"])
    # the url row and the lines its value is folded onto, up to the next field
    value = lines[start].split(None, 1)[1].strip()
    for line in lines[start + 1:]:
        if line[:20].strip():
            break
        value += line.strip()
    assert value == LONG, r.stdout
