"""Opening a crawl file: a SQLite database that is not one is refused and left as it was."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from fairfetch.audit.crawlfile import CrawlFile
from fairfetch.errors import AuditError


def _someone_elses_db(path: Path) -> bytes:
    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE feeds (id INTEGER PRIMARY KEY, url TEXT)")
        con.execute("INSERT INTO feeds(url) VALUES ('https://blog.example/feed')")
    con.close()
    return path.read_bytes()


@pytest.mark.parametrize("create", [True, False])
def test_audit_crawlfile_refuses_another_sqlite_database(tmp_path: Path, create: bool) -> None:
    """`audit crawl --out fairfetch.db --resume` (or `audit report fairfetch.db`) must not write
    the crawl schema, or WAL mode, into the directory's database."""
    path = tmp_path / "fairfetch.db"
    before = _someone_elses_db(path)
    with pytest.raises(AuditError, match=r"'.*fairfetch\.db' is not a fairfetch crawl file"):
        CrawlFile(path, create=create)
    assert path.read_bytes() == before
    assert not Path(f"{path}-wal").exists()
    with sqlite3.connect(path) as con:
        assert [r[0] for r in con.execute("SELECT name FROM sqlite_master")] == ["feeds"]
        assert con.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    con.close()


def test_audit_crawlfile_new_empty_and_own_files_open(tmp_path: Path) -> None:
    new = tmp_path / "new.db"
    CrawlFile(new).close()  # created
    CrawlFile(new).close()  # reopened (resume)
    CrawlFile(new, create=False).close()  # read (report, export)
    empty = tmp_path / "empty.db"
    empty.touch()
    CrawlFile(empty).close()  # an empty file is a new crawl file
    with pytest.raises(AuditError, match="does not exist"):
        CrawlFile(tmp_path / "missing.db", create=False)


def test_audit_crawlfile_unopenable_path_names_it(tmp_path: Path) -> None:
    target = tmp_path / "no-such-dir" / "site.db"
    with pytest.raises(AuditError, match=r"crawl file '.*no-such-dir/site\.db'"):
        CrawlFile(target)
    garbage = tmp_path / "notes.db"
    garbage.write_text("hello, not a database\n" * 100)
    with pytest.raises(AuditError, match=r"'.*notes\.db'.*not a database"):
        CrawlFile(garbage)
    assert garbage.read_text() == "hello, not a database\n" * 100


def test_audit_export_never_writes_over_the_crawl_file(tmp_path: Path) -> None:
    """`audit export site.db --xlsx site.db` replaced the crawl file with the workbook."""
    from fairfetch.audit.export import export_crawl

    path = tmp_path / "site.db"
    CrawlFile(path).close()
    before = path.read_bytes()
    for target in (path, tmp_path / "." / "site.db", Path(f"{path}-wal")):
        with pytest.raises(AuditError, match=r"site\.db.*crawl file"):
            export_crawl(path, xlsx=target)
        assert path.read_bytes() == before
    named_like_a_sheet = tmp_path / "links.csv"
    CrawlFile(named_like_a_sheet).close()
    with pytest.raises(AuditError, match=r"links\.csv.*crawl file"):
        export_crawl(named_like_a_sheet, csv_dir=tmp_path)
    cf = CrawlFile(named_like_a_sheet, create=False)
    assert cf.get_meta()["schema_version"] == "1"
    cf.close()
