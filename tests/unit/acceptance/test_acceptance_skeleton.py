"""Issue 2, "Project skeleton" and "Fetch engine": the two commands a newcomer types, what CI
runs, and a User-Agent that names fairfetch and a contact URL.

Nothing in the suite read the README's opening, `.ci/run` or the Makefile's recipes, and the
User-Agent test checks only that "fairfetch" appears: a default without a contact URL passed.
`make -n -B` prints the recipes without running them (nothing is installed or started).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

from fairfetch.config import Settings

ROOT = Path(__file__).resolve().parents[3]


def test_acceptance_readme_opens_with_make_demo_and_make_test() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    first_block = re.search(r"```[a-z]*\n(.*?)```", text, re.DOTALL)
    assert first_block is not None
    commands = [ln.split("#")[0].strip() for ln in first_block.group(1).splitlines()]
    assert [c for c in commands if c] == ["make demo", "make test"]
    # ... and it is the first thing after the title and the one-paragraph pitch.
    assert text.index("```") < text.index("\n## ")


def test_acceptance_ci_runs_make_test() -> None:
    run = ROOT / ".ci" / "run"
    assert os.access(run, os.X_OK)
    lines = [ln.strip() for ln in run.read_text().splitlines()]
    assert "make test" in lines


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
@pytest.mark.parametrize(
    ("target", "must_run"),
    [
        ("demo", ["-m venv .venv", "pip install", "fairfetch demo"]),
        ("test", ["-m venv .venv", "pip install", "scripts/with-postgres", "-m pytest"]),
    ],
)
def test_acceptance_make_targets_bootstrap_a_virtualenv_then_run(
    target: str, must_run: list[str]
) -> None:
    out = subprocess.run(
        ["make", "-n", "-B", target], cwd=ROOT, capture_output=True, text=True, check=True,
        timeout=60,
    ).stdout
    positions = [out.find(step) for step in must_run]
    assert -1 not in positions, (must_run, out)
    assert positions == sorted(positions), out  # set-up before use


def test_acceptance_pyproject_configures_ruff_mypy_pytest_and_changelog_exists() -> None:
    tool = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]
    assert {"ruff", "mypy", "pytest"} <= set(tool)
    assert "src/fairfetch" in tool["mypy"]["files"]
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert "Keep a Changelog" in changelog


def test_acceptance_default_user_agent_names_fairfetch_and_a_contact_url() -> None:
    ua = Settings().user_agent
    assert "fairfetch" in ua.lower()
    assert re.search(r"\+?https?://[^\s)]+", ua), ua
