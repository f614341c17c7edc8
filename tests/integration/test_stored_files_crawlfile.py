"""A file given to `audit report`, `audit export` or `audit crawl --resume` that is not a crawl
file this fairfetch can read (another database, not a database, empty, truncated, a crawl file
of another schema version) is refused in one line naming it, exit status 2, and the file is
left exactly as it was; a crawl file that is only read is never written.

Real crawl files, made by `fairfetch audit crawl` of the testbed's audit site (loopback only).
"""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from fairfetch.store import open_store
from fairfetch.testing import Testbed, testbed_thread


@pytest.fixture(scope="module")
def testbed() -> Iterator[Testbed]:
    with testbed_thread() as tb:
        yield tb


def _fairfetch(tb: Testbed, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fairfetch", *args], capture_output=True,
                          text=True, check=False, env=tb.env(), cwd=cwd)


def _site(tb: Testbed) -> str:
    return tb.url("s20.acme-audit.test", "/")


@pytest.fixture(scope="module")
def crawl_file(testbed: Testbed, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished crawl file, as `audit crawl` leaves it (tests copy it)."""
    home = tmp_path_factory.mktemp("crawl")
    done = _fairfetch(testbed, "audit", "crawl", _site(testbed), "--out", "site.db", cwd=home)
    assert done.returncode == 0, done.stderr
    return home / "site.db"


def _tree(directory: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(directory.iterdir()) if p.is_file()}


def _commands(tb: Testbed, name: str) -> dict[str, list[str]]:
    return {
        "report": ["audit", "report", name, "--json"],
        "export": ["audit", "export", name, "--xlsx", "out.xlsx"],
        "resume": ["audit", "crawl", _site(tb), "--out", name, "--resume"],
    }


def _refused(tb: Testbed, home: Path, name: str, command: str, *said: str) -> None:
    before = _tree(home)
    proc = _fairfetch(tb, *_commands(tb, name)[command], cwd=home)
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert name in proc.stderr, proc.stderr
    for words in said:
        assert words in proc.stderr, (words, proc.stderr)
    assert _tree(home) == before  # the file as it was, nothing beside it (no out.xlsx either)


def _fairfetch_store(path: Path) -> None:
    store = open_store(f"sqlite:///{path}")
    try:
        store.add_feed("http://127.0.0.2:9/feed", now=datetime(2026, 11, 30, tzinfo=UTC),
                       politeness_key="127.0.0.2")
    finally:
        store.close()


def _not_crawl_files(home: Path) -> list[str]:
    _fairfetch_store(home / "fairfetch.db")  # the directory's own store, the likeliest slip
    (home / "notes.txt").write_text("not a database\n" * 300)
    (home / "empty.db").touch()
    return ["fairfetch.db", "notes.txt"]


@pytest.mark.parametrize("command", ["report", "export", "resume"])
def test_stored_files_crawlfile_that_is_not_one_is_refused_untouched(
    testbed: Testbed, tmp_path: Path, command: str
) -> None:
    for name in _not_crawl_files(tmp_path):
        _refused(testbed, tmp_path, name, command)
    if command != "resume":  # an empty file is a new crawl file to resume into
        _refused(testbed, tmp_path, "empty.db", command, "not a fairfetch crawl file")


@pytest.mark.parametrize("size", [100, 50_000, -4096])
@pytest.mark.parametrize("command", ["report", "export", "resume"])
def test_stored_files_truncated_crawlfile_is_refused_untouched(
    testbed: Testbed, crawl_file: Path, tmp_path: Path, command: str, size: int
) -> None:
    """A crawl file cut short (a full disk, a copy interrupted): a clear refusal, never a
    report or workbook built from what was left, never a crawl resumed into it."""
    path = tmp_path / "site.db"
    shutil.copy(crawl_file, path)
    with path.open("r+b") as f:
        f.truncate(size if size > 0 else path.stat().st_size + size)
    _refused(testbed, tmp_path, "site.db", command, "malformed")


def _with_schema_version(source: Path, path: Path, version: str) -> None:
    shutil.copy(source, path)
    conn = sqlite3.connect(path)
    conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (version,))
    conn.commit()
    conn.close()


@pytest.mark.parametrize("command", ["report", "export", "resume"])
def test_stored_files_crawlfile_of_another_schema_version_is_refused_untouched(
    testbed: Testbed, crawl_file: Path, tmp_path: Path, command: str
) -> None:
    """A crawl file written by a newer fairfetch (schema version 2) may mean other things by
    the same columns: read as version 1, its report would be wrong without a word; resumed,
    version-1 rows would be written into it."""
    _with_schema_version(crawl_file, tmp_path / "site.db", "2")
    _refused(testbed, tmp_path, "site.db", command, "schema version 2")


@pytest.mark.parametrize("command", ["report", "export"])
def test_stored_files_crawlfile_only_read_is_not_written(
    testbed: Testbed, crawl_file: Path, tmp_path: Path, command: str
) -> None:
    """`audit report` and `audit export` read: a crawl file in rollback-journal mode (as
    `sqlite3 site.db .backup copy.db` or VACUUM INTO leave a copy) stays byte for byte."""
    path = tmp_path / "site.db"
    shutil.copy(crawl_file, path)
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA journal_mode=DELETE").fetchone() == ("delete",)
    conn.close()
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    proc = _fairfetch(testbed, *_commands(testbed, "site.db")[command], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert hashlib.sha256(path.read_bytes()).hexdigest() == digest
