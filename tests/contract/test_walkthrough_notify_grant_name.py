"""``notify grant NAME CREDITS`` refuses a publisher name it would file under another account.

Publishers are found by their exact name, and a grant creates the publisher it does not find:
``grant "Example Media " 500 --feed URL`` (a trailing space pasted along) opened a second
account, moved the feed's sponsorship to it and left the first one's credits stranded; ``grant ""
5`` and ``grant "   " 5`` made nameless publishers (": balance 5 credits"), and a control
character was kept in the name. Such names are refused, naming them; nothing is written.
"""

from __future__ import annotations

import json

import pytest

from fairfetch.store import open_store
from fairfetch.store.notify_credits import ledger
from fairfetch.testing import Testbed

from .conftest import Cli, assert_clean_error


@pytest.mark.parametrize("name", ["", "   ", "Example Media ", " Example Media", "A\x01B", "A\nB"])
def test_walkthrough_grant_refuses_a_name_that_would_open_another_account(
    cli: Cli, tb: Testbed, db_url: str, name: str
) -> None:
    [spec] = tb.catalog(n=1, behaviours=["podcast"])
    cli.ok("feeds", "add", spec.url)
    first = json.loads(cli.ok("notify", "grant", "Example Media", "500", "--feed", spec.url,
                              "--json").stdout)  # fmt: skip
    r = cli("notify", "grant", name, "5", "--feed", spec.url)
    assert_clean_error(r, "publisher")
    store = open_store(db_url)
    try:
        rows = ledger(store)
    finally:
        store.close()
    # one grant, to the one account
    assert [(row["publisher_id"], row["amount"]) for row in rows] == [(first["id"], 500)]
    again = json.loads(cli.ok("notify", "grant", "Example Media", "0", "--json").stdout)
    assert (again["id"], again["balance"]) == (first["id"], 500)


def test_walkthrough_grant_takes_an_ordinary_name(cli: Cli, tb: Testbed) -> None:
    out = json.loads(cli.ok("notify", "grant", "Médias d'Example, Inc.", "3", "--json").stdout)
    assert (out["publisher"], out["balance"]) == ("Médias d'Example, Inc.", 3)
