"""``fairfetch demo`` (what ``make demo`` runs) checks its web port before it crawls.

With port 8080 taken (by anything: another server, a second demo), the demo made a fresh
database, crawled its feeds and printed the crawlstats, and only then failed: "could not serve on
127.0.0.1:8080 (uvicorn exit 3)", without a word of the ``--port`` option that avoids it. It now
refuses at once, naming the port and ``--port``, before it touches a database or the testbed.
"""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fairfetch.cli import app


@pytest.fixture(autouse=True)
def _quiet_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("FAIRFETCH_DB", "FAIRFETCH_ADMIN_TOKEN", "FAIRFETCH_SMTP_URL"):
        monkeypatch.delenv(var, raising=False)


def test_walkthrough_demo_refuses_a_taken_port_before_crawling(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # the demo's own database would be ./fairfetch-demo.db
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        r = CliRunner().invoke(app, ["demo", "--feeds", "2", "--port", str(port)])
    assert r.exit_code == 2, (r.output, r.exception)
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert f"127.0.0.1:{port}" in r.stderr
    assert "--port" in r.stderr
    # nothing was made or crawled
    assert "crawl" not in r.stdout
    assert not (tmp_path / "fairfetch-demo.db").exists()


def test_walkthrough_demo_without_serving_needs_no_port(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        r = CliRunner().invoke(app, ["demo", "--feeds", "2", "--port", str(port), "--no-serve"])
    assert r.exit_code == 0, (r.output, r.exception)
    assert (tmp_path / "fairfetch-demo.db").exists()
