"""A --db URL's password never reaches the terminal, whichever way the URL is refused."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from fairfetch.cli import app


@pytest.mark.parametrize(
    "url",
    ["mysql://u:s3cret@127.0.0.1:1/x", "oracle+cx://u:s3cret@127.0.0.1:1/x",
     "postgresql+psycopg://u:s3cret@127.0.0.1:1/x"],
)  # fmt: skip
@pytest.mark.parametrize("args", [["stats"], ["stats", "--json"], ["feeds", "list", "--json"]])
def test_contract_cli_db_password_is_masked_in_every_refusal(
    url: str, args: list[str], tmp_path: Path
) -> None:
    r = CliRunner().invoke(app, ["--db", url, *args], env={})
    assert r.exit_code == 2, r.output
    assert "s3cret" not in r.output
    assert "s3cret" not in r.stderr
    assert "u:***@127.0.0.1:1/x" in r.stderr
