"""A database password given the other way libpq takes it, as ``?password=`` in the URL's
query, is a password too: every refusal printed it in clear (SQLAlchemy's hide_password masks
only the user-info part). Nothing listens on port 1: each URL is refused without a server."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from fairfetch.cli import app

SECRET = "s3cret-in-query"


@pytest.mark.parametrize(
    "url",
    [
        f"postgresql+psycopg://u@127.0.0.1:1/x?password={SECRET}",  # connection refused
        f"postgresql+psycopg://u@127.0.0.1:1/x?sslmode=bogus&password={SECRET}",  # bad option
        f"mysql://u@127.0.0.1:1/x?password={SECRET}",  # unsupported backend
        f"postgresql+psycopg://u:{SECRET}@127.0.0.1:notaport/x",  # not a URL at all
    ],
)
@pytest.mark.parametrize("how", ["option", "environment"])
def test_contract_cli_a_password_in_the_query_is_masked_too(
    url: str, how: str, tmp_path: Path
) -> None:
    args = ["--db", url] if how == "option" else []
    env = {"FAIRFETCH_DB": url} if how == "environment" else {"FAIRFETCH_DB": None}
    r = CliRunner().invoke(app, [*args, "feeds", "list"], env=env)
    assert r.exit_code == 2, r.output
    assert "error:" in r.stderr
    assert SECRET not in r.output
    assert SECRET not in r.stderr
