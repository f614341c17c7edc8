"""The root Typer app and the global options (``--db``, ``--config``)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.segment import Segment
from rich.text import Text
from typer.core import TyperGroup

from fairfetch.config import Settings, load_settings, unknown_environment
from fairfetch.errors import FairfetchError


class _Group(TyperGroup):
    """Every FairfetchError becomes one clear line on stderr and exit status 2, however the
    command is invoked (console script, ``python -m fairfetch``, or a test's CliRunner)."""

    def invoke(self, ctx: Any) -> Any:  # typer vendors click: its Context type is private
        try:
            return super().invoke(ctx)
        except FairfetchError as exc:
            # The message is data (it may hold brackets): escaped, and never wrapped mid-URL.
            # One line, even when a driver's reason spans several (libpq's does).
            message = " ".join(part.strip() for part in str(exc).splitlines() if part.strip())
            message = hide_query_passwords(message)
            err_console.print(
                f"[red]error:[/red] {escape(message)}", highlight=False, soft_wrap=True
            )
            raise typer.Exit(2) from None


#: A password given as libpq also takes it, ``?password=…`` in a URL's query (or ``password=…``
#: in a keyword string): SQLAlchemy's ``hide_password`` masks only the user-info part.
_QUERY_PASSWORD = re.compile(r"(?i)(\bpassword=)[^&\s'\"]+")


def hide_query_passwords(text: str) -> str:
    """``text`` with every ``password=VALUE`` masked: an error naming a database URL (the store
    names it, as do libpq's own messages) reaches terminals and cron mail."""
    return _QUERY_PASSWORD.sub(r"\1***", text)


app = typer.Typer(
    cls=_Group,
    name="fairfetch",
    help="A polite, resilient crawler for the open web's feeds and sites.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
#: What a terminal would act on rather than show: C0 controls but tab and line feed, DEL, C1
#: (U+009B is a one-character CSI). Rich drops BEL, backspace and CR, but not ESC.
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


class _Console(Console):
    """A console that never writes a control character of the data it prints.

    Titles, hubs' reasons and servers' error texts are other people's strings: ``\x1b]0;…``
    would retitle the operator's terminal and ``\x1b[2J`` clear it. Rich's own styling and
    cursor moves are control segments or style codes added after this point, so they stay.
    (Removed, not replaced: rich counts them as zero-width, and a table keeps its layout.)"""

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        return super()._render_buffer(
            segment if segment.control
            else Segment(_CONTROLS.sub("", segment.text), segment.style)
            for segment in buffer
        )


# Soft wrap: a line of output is one fact ("added URL", "invalid 'URL': why") and scripts read
# it line by line; rich would otherwise cut long URLs at 80 columns whenever stdout is a pipe.
# Tables are laid out to the width as before.
console = _Console(soft_wrap=True)
err_console = _Console(stderr=True, soft_wrap=True)


def say_stopping() -> None:
    """What the first Ctrl-C of a long-running command prints (see fairfetch.stop_signals)."""
    err_console.print(
        "stopping once the work in hand ends: the fetches in flight finish or time out "
        "(Ctrl-C again to stop now)",
        highlight=False, markup=False,
    )


@contextmanager
def second_ctrl_c_exits() -> Iterator[None]:
    """A second Ctrl-C (KeyboardInterrupt) ends the command as a shell says: exit 130."""
    try:
        yield
    except KeyboardInterrupt:
        raise typer.Exit(130) from None


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
    for message in unknown_environment():
        err_console.print(f"warning: {message}", markup=False, highlight=False)


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
    return open_store_at(settings_of(ctx).db)


def _shown_url(url: str) -> str:
    """The database URL with its password masked: an error message must not leak it."""
    from sqlalchemy.engine import make_url

    try:
        return hide_query_passwords(make_url(url).render_as_string(hide_password=True))
    except Exception:
        return hide_query_passwords(url)


def _in_memory(url: str) -> bool:
    from sqlalchemy.engine import make_url

    try:
        parsed = make_url(url)
    except Exception:
        return False  # the store names what is wrong with it
    if not parsed.drivername.startswith("sqlite"):
        return False
    database = parsed.database or ""
    return database in ("", ":memory:") or "mode=memory" in url


def _sqlite_path_problem(url: str) -> str | None:
    """What is wrong with the file a SQLite URL names, before SQLite says only "unable to open
    database file" (which a newcomer cannot act on): a bare path given for a URL, a directory
    that does not exist, or a directory named as the file."""
    from pathlib import Path

    from sqlalchemy.engine import make_url

    if "://" not in url and "@" not in url and url.strip():
        # Shown as given: it holds no password (no user part), and the fix is to prefix it.
        return f"not a database URL; for a SQLite file write sqlite:///{url}"
    try:
        parsed = make_url(url)
    except Exception:
        return None  # the store names what is wrong with it
    if not parsed.drivername.startswith("sqlite") or not parsed.database:
        return None
    if parsed.database.startswith("file:"):
        return None  # a SQLite URI filename (?uri=true): SQLite reads it, not a plain path
    path = Path(parsed.database)
    try:
        if path.is_dir():
            return f"{str(path)!r} is a directory; name a file in it ({path / 'fairfetch.db'})"
        parent = path.parent
        if not parent.is_dir():
            return (
                f"directory {str(parent)!r} does not exist (create it first, or name another "
                "file)"
            )
    except OSError:
        return None  # not ours to look into (permissions): the store says what it can
    return None


def open_store_at(url: str) -> Any:
    """Open (create, migrate) the store, turning "cannot open that database" into one clear
    StoreError naming the URL: a wrong --db is the user's input, not a crash."""
    import sqlalchemy as sa

    from fairfetch.errors import StoreError
    from fairfetch.store import open_store

    problem = _sqlite_path_problem(url)
    if problem is not None:
        raise StoreError(f"database {url!r}: {problem}")
    if _in_memory(url):
        # Each command (and each thread of one) would start on an empty database and keep
        # nothing: a path left out of --db is a mistake to name, not a directory to serve.
        # (Shown as given: a SQLite URL holds no password.)
        raise StoreError(
            f"database {url!r}: an in-memory SQLite database keeps nothing after the "
            "command; name a file (sqlite:///fairfetch.db)"
        )
    try:
        return open_store(url)
    except FairfetchError:
        raise  # the store names the URL with its password masked
    except (sa.exc.SQLAlchemyError, OSError) as exc:
        detail = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
        raise StoreError(f"database {_shown_url(url)!r}: cannot open ({detail})") from None


def _utc(value: Any) -> Any:
    """Every datetime as aware UTC (a naive one is UTC by the store's convention), so --json
    always prints ``…Z``, whatever a repository handed back."""
    if isinstance(value, datetime):
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    if isinstance(value, dict):
        return {k: _utc(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_utc(v) for v in value]
    return value


def utc_text(value: datetime, *, to: str = "seconds") -> str:
    """A time for a text view, in UTC and spelled as --json spells it (``…Z``), to the second
    or the minute (``to="minutes"``): a bare ``17:48`` reads as local time to most readers."""
    value = _utc(value)
    return value.strftime("%Y-%m-%dT%H:%M:%SZ" if to == "seconds" else "%Y-%m-%dT%H:%MZ")


def plain(value: object) -> Text:
    """A table cell holding data (a title, a URL, an error): never read as rich markup, so a
    feed titled ``[/b]`` neither vanishes nor crashes the listing."""
    return Text("" if value is None else str(value))


def print_json(value: Any) -> None:
    from fairfetch.store import dumps

    # Plain print: rich would re-wrap long lines and break the JSON for pipes. JSON escapes
    # C0 controls itself; DEL and C1 (only ever inside strings) are escaped too, so a hostile
    # string reads back the same and never reaches a terminal raw.
    text = _RAW_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", dumps(_utc(value)))
    print(text)


_RAW_IN_JSON = re.compile("[\x7f-\x9f]")
