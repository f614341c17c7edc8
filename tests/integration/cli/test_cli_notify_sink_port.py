"""``notify sink --port``: a port out of range, or one already taken, is one line naming it.

Both were tracebacks (OverflowError out of bind(), OSError 'address already in use' out of
aiosmtpd's thread) a newcomer following docs/notify.md met as soon as a second sink was started.
"""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fairfetch.cli import app


@pytest.fixture(autouse=True)
def _db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAIRFETCH_DB", f"sqlite:///{tmp_path}/sink.db")


@pytest.mark.parametrize("port", ["70000", "-1"])
def test_cli_notify_sink_refuses_a_port_out_of_range(port: str) -> None:
    r = CliRunner().invoke(app, ["notify", "sink", "--port", port])
    assert r.exit_code == 2, (r.output, r.exception)
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert "--port" in r.output


def test_cli_notify_sink_on_a_port_in_use_is_one_line() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        r = CliRunner().invoke(app, ["notify", "sink", "--port", str(port)])
    assert r.exit_code == 2, (r.output, r.exception)
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert f"127.0.0.1:{port}" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
