"""The command line as DESIGN.md's Public contract lists it, each part explained and documented.

Every command and option of the contract exists; every command, argument and option says in
``--help`` what it is for (several ``audit`` options had no help at all); and every option is
named somewhere in README.md or docs/, so a newcomer reading the docs meets all of them.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer.main

from fairfetch.cli import app

ROOT = Path(__file__).resolve().parents[2]

#: DESIGN.md's "Commands" list, option by option (``worker`` is specified in its own issue and
#: not built yet: docs/operations.md says so).
CONTRACT: dict[str, set[str]] = {
    "feeds add": set(),
    "feeds import": set(),
    "feeds export": {"--opml"},
    "feeds list": {"--kind", "--status", "--json"},
    "feeds show": {"--json"},
    "feeds refresh": set(),
    "crawl": {"--once", "--max"},
    "stats": {"--json"},
    "serve": {"--host", "--port"},
    "run": {"--host", "--port"},
    "testbed": {"--port"},
    "demo": set(),
    "audit crawl": {"--out", "--max-pages", "--resume"},
    "audit export": {"--xlsx", "--csv"},
    "audit report": {"--json"},
    "notify subscribe": {"--mode", "--hour", "--weekday", "--tz", "--only", "--except"},
    "notify confirm": set(),
    "notify list": {"--json"},
    "notify unsubscribe": set(),
    "notify send-due": set(),
    "notify outbox": {"--json"},
}


# typer vendors its own click: commands and parameters are read by what they have.
def _commands() -> Iterator[tuple[str, Any]]:
    def walk(cmd: Any, path: list[str]) -> Iterator[tuple[str, Any]]:
        if hasattr(cmd, "commands"):
            for name, sub in cmd.commands.items():
                yield from walk(sub, [*path, name])
        else:
            yield " ".join(path), cmd

    yield from walk(typer.main.get_command(app), [])


COMMANDS = dict(_commands())


def _options(cmd: Any) -> set[str]:
    return {opt for p in cmd.params if p.param_type_name == "option" for opt in p.opts}


def test_the_global_options_of_the_contract_exist() -> None:
    root = typer.main.get_command(app)
    assert {"--db", "--config"} <= _options(root)


@pytest.mark.parametrize("name", sorted(CONTRACT))
def test_every_contract_command_and_option_exists(name: str) -> None:
    assert name in COMMANDS, sorted(COMMANDS)
    assert CONTRACT[name] <= _options(COMMANDS[name])


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_argument_and_option_has_help(name: str) -> None:
    cmd = COMMANDS[name]
    assert (cmd.help or "").strip(), f"{name}: no help"
    missing = [p.name for p in cmd.params if p.name != "help" and not (getattr(p, "help", None)
                                                                         or "").strip()]
    assert missing == [], f"{name}: no help for {missing}"


def test_every_option_is_named_in_the_docs() -> None:
    docs = (ROOT / "README.md").read_text(encoding="utf-8") + "".join(
        p.read_text(encoding="utf-8") for p in sorted((ROOT / "docs").glob("*.md"))
    )
    # A flag pair (--serve/--no-serve) is documented by either spelling.
    undocumented = sorted(
        f"{name} {'/'.join(p.opts)}"
        for name, cmd in COMMANDS.items()
        for p in cmd.params
        if p.param_type_name == "option" and p.name != "help"
        and not any(o in docs for o in [*p.opts, *p.secondary_opts] if o.startswith("--"))
    )
    assert undocumented == []
