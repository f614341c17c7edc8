"""``fairfetch audit report`` in the terminal: a rule id and an example URL are never cut.

Through a pipe (80 columns) rich cut the Rule column to 'broken-external-…' and every example
URL to 'http://www.acme-…': 'description-too-long' and 'description-too-wide' read the same,
and no example could be found again. Ids stay whole; examples are folded, like feed URLs in
``feeds list``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fairfetch.cli import app
from fairfetch.testing import testbed_thread


@pytest.fixture(scope="module")
def crawl_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("audit") / "site.crawl"
    with testbed_thread(seed=2) as tb:
        r = CliRunner().invoke(
            app,
            ["audit", "crawl", tb.url("www.acme-audit.test", "/"), "--out", str(out),
             "--max-pages", "60", "--in-process", "-q"],
            env=tb.env(),
        )
        assert r.exit_code == 0, (r.output, r.exception)
    return out


def test_cli_audit_report_keeps_rule_ids_and_examples_whole(
    crawl_file: Path, tmp_path: Path
) -> None:
    runner = CliRunner()
    data = json.loads(runner.invoke(app, ["audit", "report", str(crawl_file), "--json"]).stdout)
    assert len(data["rules"]) >= 5
    r = runner.invoke(app, ["audit", "report", str(crawl_file)])  # 80 columns, as in a pipe
    assert r.exit_code == 0, (r.output, r.exception)
    assert "…" not in r.stdout, r.stdout
    cells = {c for line in r.stdout.splitlines()
             for c in (p.strip() for p in line.replace("┃", "│").split("│")) if c}
    for rule in data["rules"]:
        assert rule["id"] in cells, (rule["id"], r.stdout)
    # The first example of each rule is all there, folded in its cell: its URL's characters in
    # order, in the Example column of consecutive lines.
    flat = "".join(line.split("│")[-2].strip() for line in r.stdout.splitlines()
                   if line.count("│") >= 6)
    for rule in data["rules"]:
        url = rule["findings"][0]["url"]
        assert url in flat, (url, r.stdout)
