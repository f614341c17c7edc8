"""``notify list`` shows a subscription's whole category filter: through a pipe (80 columns) a
filter of a few categories read 'only technology,…', so which items a reader gets could not be
told from the list. The filter column is folded, as the address and feed columns are."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from fairfetch.cli import app

FEED = "http://filters.example.test/feed.xml"
CATEGORIES = "technology,science,politics,economics,international-affairs"


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    url = f"sqlite:///{tmp_path}/filters.db"
    monkeypatch.setenv("FAIRFETCH_DB", url)
    monkeypatch.delenv("COLUMNS", raising=False)
    # Nothing listens on the discard port: confirmation mails stay queued, nothing leaves.
    monkeypatch.setenv("FAIRFETCH_SMTP_URL", "smtp://127.0.0.1:9")
    return url


def test_walkthrough_notify_list_shows_the_whole_filter(db: str) -> None:
    runner = CliRunner()
    r = runner.invoke(app, ["notify", "subscribe", "r@example.test", FEED, "--only", CATEGORIES])
    assert r.exit_code == 0, (r.output, r.exception)
    out = runner.invoke(app, ["notify", "list"]).stdout
    assert "…" not in out, out
    cells = "".join(
        line.split("│")[5].strip() for line in out.splitlines() if line.count("│") == 7
    )
    assert cells.replace(" ", "") == "only" + CATEGORIES, out


def test_walkthrough_notify_list_keeps_only_and_except_apart(db: str) -> None:
    """Both filters at once (allowed: only these, and of those all but …) were glued into one
    word, 'only techall but ads'."""
    runner = CliRunner()
    r = runner.invoke(app, ["notify", "subscribe", "both@example.test", FEED,
                            "--only", "tech", "--except", "ads"])  # fmt: skip
    assert r.exit_code == 0, (r.output, r.exception)
    out = runner.invoke(app, ["notify", "list"], env={"COLUMNS": "200"}).stdout
    [row] = [line for line in out.splitlines() if "both@example.test" in line]
    cell = row.split("│")[5].strip()
    assert cell == "only tech; all but ads", out
