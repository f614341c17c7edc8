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


def test_contract_cli_demo_names_its_database_without_the_password(pg_url: str) -> None:
    """The demo says which database it filled: a PostgreSQL URL's password stays masked
    there, as in every error (the terminal and its scrollback are no place for it)."""
    secret = "s3cret-demo-pw"
    url = pg_url.replace("://fairfetch@", f"://fairfetch:{secret}@", 1)
    assert secret in url  # the throwaway cluster trusts loopback: any password connects
    r = CliRunner().invoke(app, ["--db", url, "demo", "--feeds", "1", "--no-serve"])
    assert r.exit_code == 0, (r.output, r.exception)
    assert "feeds added to" in r.output
    assert secret not in r.output
    assert "***" in r.output
