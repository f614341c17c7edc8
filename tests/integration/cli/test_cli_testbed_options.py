"""``fairfetch testbed`` options are checked before anything listens: a negative or non-finite
rate or latency is a one-line error naming the option (a negative rate was a ValueError
traceback out of the token bucket; nan and inf were accepted)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from fairfetch.cli import app


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("--letterbox-rate", "-1"),
        ("--letterbox-rate", "nan"),
        ("--letterbox-rate", "inf"),
        ("--latency", "-5"),
        ("--latency", "nan"),
        ("--latency", "inf"),
    ],
)
def test_cli_testbed_refuses_bad_numbers(option: str, value: str) -> None:
    r = CliRunner().invoke(app, ["testbed", "--port", "0", option, value])
    assert r.exit_code == 2, (r.output, r.exception)
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert "Traceback" not in r.output
    assert option in r.output
