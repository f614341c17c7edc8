"""A --db that is not a fairfetch store, or cannot be one, is refused in one line that names it
(password masked), with exit status 2, and the file is left exactly as it was: not a byte
changed, no -wal/-shm beside it, no directory created.

Each case runs the real command (``python -m fairfetch``) on a real file, as a user would.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from fairfetch.store import open_store

SECRET = "s3cret-pw"
FEED = "http://127.0.0.2:9/feed"


def _fairfetch(*args: str, user: str | None = None) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "fairfetch", *args]
    if user is not None:
        command = ["setpriv", "--reuid", user, "--regid", user, "--clear-groups", *command]
    # Loopback only, and not even there: a feed URL on 127.0.0.2 is refused by the perimeter.
    env = {**os.environ, "FAIRFETCH_DB": "", "FAIRFETCH_ALLOW_NETWORKS": "127.0.0.1/32",
           "FAIRFETCH_RESOLVE": ""}
    return subprocess.run(command, capture_output=True, text=True, check=False, env=env)


def _store_with_a_feed(path: Path) -> None:
    """A store in use, made without the network (``feeds add`` would fetch the feed)."""
    store = open_store(f"sqlite:///{path}")
    try:
        store.add_feed(FEED, now=datetime(2026, 11, 30, tzinfo=UTC), politeness_key="127.0.0.2")
    finally:
        store.close()


def _refused(proc: subprocess.CompletedProcess[str], *named: str) -> str:
    """One clear line on stderr naming the store, exit status 2, no traceback, no password."""
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert SECRET not in proc.stderr + proc.stdout
    for name in named:
        assert name in proc.stderr, (name, proc.stderr)
    return proc.stderr


def _tree(directory: Path) -> dict[str, str]:
    """Every file under ``directory`` and its digest: what must not change."""
    return {
        str(p.relative_to(directory)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(directory.rglob("*")) if p.is_file()
    }


@pytest.mark.parametrize(
    "url",
    [
        f"postgresql://u:{SECRET}@127.0.0.1:abc/x",  # a port that is not a number
        f"postgresql+psycopg://u:{SECRET}@[::1/x",  # an unclosed IPv6 bracket
        f"postgres ql://u:{SECRET}@127.0.0.1/x",  # not a URL at all
        f"u:{SECRET}@127.0.0.1/x",  # the scheme left out
    ],
)
def test_stored_files_db_url_that_does_not_parse_is_named_without_its_password(url: str) -> None:
    err = _refused(_fairfetch("--db", url, "feeds", "list"), "u:***@")
    assert "not a valid" in err, err


@pytest.mark.parametrize(
    "scheme", ["postgresql+psycopg2", "postgresql+asyncpg", "postgresql+pg8000"]
)
def test_stored_files_db_url_with_another_postgresql_driver_is_refused_naming_it(
    scheme: str,
) -> None:
    url = f"{scheme}://u:{SECRET}@127.0.0.1:1/x"
    err = _refused(_fairfetch("--db", url, "feeds", "list"), f"{scheme}://u:***@127.0.0.1:1/x")
    assert "postgresql+psycopg://" in err, err


def test_stored_files_db_url_with_another_sqlite_driver_is_refused_and_creates_nothing(
    tmp_path: Path,
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path}/fairfetch.db"
    err = _refused(_fairfetch("--db", url, "feeds", "list"), url)
    assert "sqlite://" in err, err
    assert list(tmp_path.iterdir()) == []


def _alembic_app(path: Path, revision: str | None) -> None:
    """The database of another application that also uses Alembic (very common): its own
    tables, and alembic_version with its own revision (or none, after `alembic downgrade`)."""
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE alembic_version (version_num VARCHAR(32) PRIMARY KEY)")
    if revision is not None:
        conn.execute("INSERT INTO alembic_version VALUES (?)", (revision,))
    conn.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
    conn.execute("INSERT INTO users (name) VALUES ('keep me')")
    conn.commit()
    conn.close()


@pytest.mark.parametrize("revision", ["ae1027a6acf", None])
def test_stored_files_sqlite_of_another_alembic_application_is_refused_untouched(
    tmp_path: Path, revision: str | None
) -> None:
    path = tmp_path / "app.db"
    _alembic_app(path, revision)
    before = _tree(tmp_path)

    err = _refused(_fairfetch("--db", f"sqlite:///{path}", "feeds", "list"), str(path))
    assert "not a fairfetch database" in err or (revision or "?") in err, err

    assert _tree(tmp_path) == before  # not switched to WAL, no table added, no -wal/-shm
    check = sqlite3.connect(path)
    assert check.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                         "ORDER BY name").fetchall() == [("alembic_version",), ("users",)]
    assert check.execute("PRAGMA journal_mode").fetchone() == ("delete",)
    check.close()


def test_stored_files_missing_parent_directory_is_named_and_not_created(tmp_path: Path) -> None:
    path = tmp_path / "not" / "there" / "fairfetch.db"
    _refused(_fairfetch("--db", f"sqlite:///{path}", "stats"), str(path))
    assert list(tmp_path.iterdir()) == []


def _other_user() -> str | None:
    """Permissions bind every user but root: as root, the command runs as nobody."""
    if os.geteuid() != 0:
        return None
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: cannot drop privileges")
    return "65534"


@pytest.mark.parametrize("args", [["feeds", "list"], ["feeds", "add", "http://127.0.0.2:9/b"]])
def test_stored_files_read_only_store_is_refused_naming_it_and_left_untouched(
    tmp_path: Path, args: list[str]
) -> None:
    """A store an operator cannot write (a backup mounted read-only, a file of another user):
    one line naming it, nothing written. The directory is read-only too, so not even a
    -wal/-shm file can appear beside it."""
    user = _other_user()
    home = tmp_path / "ro"
    home.mkdir()
    path = home / "fairfetch.db"
    _store_with_a_feed(path)
    for extra in home.glob("fairfetch.db-*"):
        extra.unlink()  # a clean shutdown leaves the database file alone
    path.chmod(0o444)
    home.chmod(0o555)
    before = _tree(home)
    try:
        _refused(_fairfetch("--db", f"sqlite:///{path}", *args, user=user), str(path))
        assert _tree(home) == before
    finally:
        home.chmod(0o755)


def test_stored_files_fairfetch_store_restored_in_rollback_mode_runs_in_wal_again(
    tmp_path: Path,
) -> None:
    """The other side of leaving foreign files alone: our own store, copied back from a backup
    in rollback-journal mode, is switched to WAL again (readers never block the writer)."""
    path = tmp_path / "fairfetch.db"
    _store_with_a_feed(path)
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA journal_mode=DELETE").fetchone() == ("delete",)
    conn.close()

    listed = _fairfetch("--db", f"sqlite:///{path}", "feeds", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert FEED in listed.stdout
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    conn.close()


@pytest.mark.parametrize("query", ["timeout=abc", "check_same_thread=maybe"])
def test_stored_files_sqlite_url_with_a_bad_option_is_named_and_creates_nothing(
    tmp_path: Path, query: str
) -> None:
    url = f"sqlite:///{tmp_path}/fairfetch.db?{query}"
    err = _refused(_fairfetch("--db", url, "feeds", "list"), url)
    assert query.split("=")[0] in err, err
    assert list(tmp_path.iterdir()) == []
