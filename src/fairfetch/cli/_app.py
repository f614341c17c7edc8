"""The root Typer app and the global options (``--db``, ``--config``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

import typer
from rich.console import Console
from typer.core import TyperGroup

from fairfetch.config import Settings, load_settings
from fairfetch.errors import FairfetchError


class _Group(TyperGroup):
    """Every FairfetchError becomes one clear line on stderr and exit status 2, however the
    command is invoked (console script, ``python -m fairfetch``, or a test's CliRunner)."""

    def invoke(self, ctx: Any) -> Any:  # typer vendors click: its Context type is private
        try:
            return super().invoke(ctx)
        except FairfetchError as exc:
            err_console.print(f"[red]error:[/red] {exc}", markup=True, highlight=False)
            raise typer.Exit(2) from None


app = typer.Typer(
    cls=_Group,
    name="fairfetch",
    help="A polite, resilient crawler for the open web's feeds and sites.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
console = Console()
err_console = Console(stderr=True)


@dataclass
class Globals:
    db: str | None = None
    config: str | None = None

    def settings(self, **overrides: Any) -> Settings:
        return load_settings(self.config, db=self.db, **overrides)


@app.callback()
def _root(
    ctx: typer.Context,
    db: Annotated[
        str | None,
        typer.Option(
            "--db", help="Database URL (default: $FAIRFETCH_DB or sqlite:///fairfetch.db)"
        ),
    ] = None,
    config: Annotated[
        str | None, typer.Option("--config", help="TOML config file", metavar="FILE")
    ] = None,
) -> None:
    ctx.obj = Globals(db=db, config=config)


def globals_of(ctx: typer.Context) -> Globals:
    obj = ctx.find_root().obj
    assert isinstance(obj, Globals)
    return obj


def main() -> None:
    """Entry point of the ``fairfetch`` console script."""
    app()


def settings_of(ctx: typer.Context, **overrides: Any) -> Settings:
    return globals_of(ctx).settings(**overrides)


def store_of(ctx: typer.Context) -> Any:
    """Open the store named by --db / FAIRFETCH_DB (created and migrated on first use)."""
    from fairfetch.store import open_store

    return open_store(settings_of(ctx).db)


def print_json(value: Any) -> None:
    from fairfetch.store import dumps

    # Plain print: rich would re-wrap long lines and break the JSON for pipes.
    print(dumps(value))
