"""``fairfetch --db URL demo`` runs on a fresh database, as DESIGN.md says, or not at all.

Given a database that already held a directory, the demo added its testbed feeds to it and
subscribed its two demo readers to every feed there, the user's own included: a later
``fairfetch run`` with a real mail server would have mailed them. Now such a database is refused
by name and left as it was; an empty or new one is still used.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fairfetch.cli import app
from fairfetch.store import notify_repo, open_store


@pytest.fixture(autouse=True)
def _quiet_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("FAIRFETCH_DB", "FAIRFETCH_ADMIN_TOKEN", "FAIRFETCH_SMTP_URL"):
        monkeypatch.delenv(var, raising=False)


def _counts(url: str) -> tuple[int, int]:
    store = open_store(url)
    try:
        return len(list(store.iter_feeds())), len(notify_repo.list_subscriptions(store))
    finally:
        store.close()


def test_cli_demo_refuses_a_database_that_holds_a_directory(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/mine.db"
    store = open_store(url)
    try:
        store.add_feed("http://mine.example/feed.xml", now=datetime.now(UTC),
                       politeness_key="mine.example")
    finally:
        store.close()
    r = CliRunner().invoke(app, ["--db", url, "demo", "--no-serve", "--feeds", "2"])
    assert r.exit_code == 2, (r.output, r.exception)
    assert "mine.db" in r.stderr
    assert "fresh" in r.stderr
    assert _counts(url) == (1, 0)


def test_cli_demo_uses_a_new_database(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/new.db"
    r = CliRunner().invoke(app, ["--db", url, "demo", "--no-serve", "--feeds", "2"])
    assert r.exit_code == 0, (r.output, r.exception)
    feeds, subscriptions = _counts(url)
    assert feeds == 2
    assert subscriptions > 0


def test_cli_demo_says_it_does_not_read_a_config_file(tmp_path: Path) -> None:
    """The demo runs on its own settings (the simulated web, a local mail catcher); a
    ``--config`` given to it was silently not read, so a user tuning the demo through the file
    saw no effect and no word why."""
    config = tmp_path / "mine.toml"
    config.write_text('[fairfetch]\nper_key_in_flight = 1\n')
    url = f"sqlite:///{tmp_path}/demo.db"
    r = CliRunner().invoke(
        app, ["--db", url, "--config", str(config), "demo", "--no-serve", "--feeds", "2"]
    )
    assert r.exit_code == 0, (r.output, r.exception)
    assert "does not read --config" in r.stderr
    assert "mine.toml" in r.stderr
    plain = CliRunner().invoke(
        app, ["--db", f"sqlite:///{tmp_path}/demo2.db", "demo", "--no-serve", "--feeds", "2"]
    )
    assert plain.exit_code == 0, (plain.output, plain.exception)
    assert "--config" not in plain.stderr
