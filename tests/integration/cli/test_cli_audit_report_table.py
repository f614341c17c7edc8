"""``fairfetch audit report`` in the terminal: a rule id and an example URL are never cut.

Through a pipe (80 columns) rich cut the Rule column to 'broken-external-…' and every example
URL to 'http://www.acme-…': 'description-too-long' and 'description-too-wide' read the same,
and no example could be found again. In a wide terminal the findings are a table: ids stay
whole, examples are folded, like feed URLs in ``feeds list``. Below 120 columns they are a list
(a table left an example ten characters a line there): a line a rule, its examples whole on
lines of their own.
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
    r = runner.invoke(app, ["audit", "report", str(crawl_file)], env={"COLUMNS": "130"})
    assert r.exit_code == 0, (r.output, r.exception)
    assert "┃ Rule" in r.stdout  # the table
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


def test_cli_audit_report_in_80_columns_is_a_list_with_whole_ids_and_examples(
    crawl_file: Path,
) -> None:
    runner = CliRunner()
    data = json.loads(runner.invoke(app, ["audit", "report", str(crawl_file), "--json"]).stdout)
    r = runner.invoke(app, ["audit", "report", str(crawl_file), "--examples", "2"],
                      env={"COLUMNS": "80"})
    assert r.exit_code == 0, (r.output, r.exception)
    assert "│" not in r.stdout, r.stdout
    assert "…" not in r.stdout, r.stdout
    lines = r.stdout.splitlines()
    assert lines[0].startswith("Audit of ")
    # Worst first, as in the JSON; each rule's line, then its first examples, whole and indented.
    heads = [ln for ln in lines[1:] if ln.split(" ", 1)[0] in ("error", "warning", "notice")]
    assert [h.split()[1] for h in heads] == [rule["id"] for rule in data["rules"]]
    for head, rule in zip(heads, data["rules"], strict=True):
        assert head.split()[0] == rule["severity"]
        assert f"({rule['count']})" in head
        assert rule["title"] in head
        at = lines.index(head)
        shown = [f"{f['url']} {f['detail']}".strip() for f in rule["findings"][:2]]
        assert [ln.strip() for ln in lines[at + 1 : at + 1 + len(shown)]] == shown
