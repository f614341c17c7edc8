"""``fairfetch websub list`` cut the lease expiry at 80 columns (``2026-12-05T17:50…``): the day
was readable, not the time, in the one place the text view shows it; and it was spelled
``+00:00`` (or with no zone at all, as SQLite hands it back) where every other view says ``Z``.
"""

from __future__ import annotations

import json

from .test_walkthrough_websub_text import _run, db  # noqa: F401  (fixture)


def test_walkthrough_websub_list_shows_the_whole_lease_expiry(db: str) -> None:  # noqa: F811
    [active] = json.loads(_run(db, "websub", "list", "--state", "active", "--json").stdout)
    expires = active["lease_expires_at"]  # ISO 8601 UTC, ...Z
    assert expires.endswith("Z"), expires
    r = _run(db, "websub", "list")  # 80 columns, as in a pipe
    assert r.exit_code == 0, r.output
    assert "…" not in r.stdout, r.stdout
    cells = "".join(
        ln.split("│")[5].strip() for ln in r.stdout.splitlines() if ln.count("│") == 7
    )
    # to the second, in the --json spelling (UTC, Z)
    assert expires[:19] in cells, r.stdout
    assert "Z" in cells, r.stdout
