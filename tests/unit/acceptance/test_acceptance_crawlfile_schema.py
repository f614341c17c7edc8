"""Issue 7, "Crawl": "The crawl file is SQLite with a documented schema ... Unique index per URL in
every table: resuming updates rows, never duplicates them."

The suite checks the data of one crawl for duplicate URLs; nothing compared the schema with its
documentation (docs/audit.md, "Crawl file schema") or asked SQLite for the unique indexes. Here
every documented table must exist with exactly its documented columns, and its documented
unique key must be a unique index (or the primary key) in the file.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

from fairfetch.audit.crawlfile import CrawlFile

DOC = Path(__file__).resolve().parents[3] / "docs" / "audit.md"


def _documented() -> dict[str, tuple[set[str], tuple[str, ...]]]:
    tables: dict[str, tuple[set[str], tuple[str, ...]]] = {}
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("| table | columns | unique |"):].split("\n\n")[0]
    for line in section.splitlines():
        m = re.match(r"^\| `(\w+)` \| (.*) \| (.*) \|$", line)
        if not m:
            continue
        name, columns, unique = m.groups()
        while re.search(r"\([^()]*\)", columns):  # notes in parentheses name values, not columns
            columns = re.sub(r"\([^()]*\)", "", columns)
        columns = columns.split(" — ")[0]  # after a dash: what the rows hold
        cols = {c for c in re.findall(r"`(\w+)`", columns)}
        key = tuple(re.findall(r"(\w+)", unique.replace("`", "")))
        tables[name] = (cols, key)
    return tables


def _unique_keys(conn: sqlite3.Connection, table: str) -> set[tuple[str, ...]]:
    keys = set()
    for _seq, index, unique, *_ in conn.execute(f"PRAGMA index_list({table})"):
        if unique:
            cols = [r[2] for r in conn.execute(f"PRAGMA index_info({index})")]
            keys.add(tuple(cols))
    pk = [r[1] for r in sorted(conn.execute(f"PRAGMA table_info({table})"), key=lambda r: r[5])
          if r[5]]
    if pk:
        keys.add(tuple(pk))
    return keys


def test_acceptance_crawl_file_schema_is_the_documented_one(tmp_path: Path) -> None:
    documented = _documented()
    assert {"pages", "links", "images", "page_images", "resources", "page_resources",
            "redirects", "externals"} <= set(documented)
    cf = CrawlFile(tmp_path / "schema.db")
    try:
        conn = cf.conn
        actual = {r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert set(documented) == actual
        for table, (columns, key) in documented.items():
            real = {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}
            assert real == columns, (table, real ^ columns)
            assert key in _unique_keys(conn, table), (table, key)
    finally:
        cf.close()


def test_acceptance_every_url_table_has_a_unique_index_on_its_url(tmp_path: Path) -> None:
    cf = CrawlFile(tmp_path / "unique.db")
    try:
        conn = cf.conn
        tables = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")]
        for table in tables:
            columns = {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}
            url_column = next((c for c in ("url", "from_url") if c in columns), None)
            if url_column is None:
                continue
            assert (url_column,) in _unique_keys(conn, table), table
    finally:
        cf.close()
