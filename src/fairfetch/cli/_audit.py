"""``fairfetch audit crawl|export|report``: thin wrappers over fairfetch.audit."""

from __future__ import annotations

import asyncio
import json
import re
import shlex
from pathlib import Path
from typing import Annotated
from urllib.parse import urlsplit

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from fairfetch.cli._app import app, console, globals_of, plain
from fairfetch.errors import AuditError, InputError
from fairfetch.gctune import tune_for_crawling

audit_app = typer.Typer(help="Audit one website: crawl it, judge it, export a workbook.",
                        no_args_is_help=True)
app.add_typer(audit_app, name="audit")

#: Requests in flight to the audited site, at most (--concurrency): audit.crawler.MAX_CONCURRENCY,
#: spelt here so that --help does not import the crawl (a test keeps the two equal).
MAX_CONCURRENCY = 1024

#: What JSON leaves raw and a terminal would act on: DEL and C1 (as cli._app.print_json).
_RAW_IN_JSON = re.compile("[\x7f-\x9f]")

_SEVERITY_STYLE = {"error": "bold red", "warning": "yellow", "notice": "cyan"}


def _thresholds(pairs: list[str] | None):  # type: ignore[no-untyped-def]
    from fairfetch.audit.rules import Thresholds

    try:
        return Thresholds.from_pairs(pairs or [])
    except ValueError as exc:
        raise AuditError(f"--threshold: {exc}") from None


@audit_app.command("crawl")
def crawl(
    ctx: typer.Context,
    url: Annotated[str, typer.Argument(help="Start URL; its host is the site")],
    out: Annotated[Path, typer.Option("--out", help="Crawl file (SQLite) to write")],
    max_pages: Annotated[
        int | None,
        typer.Option("--max-pages", min=1, help="Stop after N pages (breadth-first order)"),
    ] = None,
    max_depth: Annotated[
        int | None,
        typer.Option("--max-depth", min=0, help="Clicks from the start URL, at most"),
    ] = None,
    resume: Annotated[bool, typer.Option("--resume", help="Continue an interrupted crawl")] = False,
    domain: Annotated[
        bool, typer.Option("--domain", help="Whole registrable domain, not just the host")
    ] = False,
    concurrency: Annotated[
        int | None,
        # Bounded: each slot is a worker started before the first request, so 1e20 never
        # returned; and 1,024 requests in flight to one site is already no politeness.
        typer.Option("--concurrency", min=1, max=MAX_CONCURRENCY, help="Requests in flight to "
                     "the site (default: per_host_in_flight)"),
    ] = None,
    max_externals: Annotated[
        int,
        typer.Option("--max-externals", min=0, help="External URLs to status-check, at most "
                     "(the rest are counted as not checked)"),
    ] = 10_000,
    no_sitemaps: Annotated[
        bool,
        typer.Option("--no-sitemaps", help="Do not read the sitemaps (no seeds from them; "
                     "no-sitemap stays silent)"),
    ] = False,
    parse_process: Annotated[
        bool | None,
        typer.Option(
            "--parse-process/--in-process",
            help="Parse and write in a second process (default: when two cores are available)",
        ),
    ] = None,
    trap_max_url_length: Annotated[
        int,
        typer.Option("--trap-max-url-length", min=0, help="Crawler traps: do not follow an "
                     "internal URL longer than N characters (0: no limit)"),
    ] = 2000,
    trap_max_repeats: Annotated[
        int,
        typer.Option("--trap-max-repeats", min=0, help="Crawler traps: do not follow an "
                     "internal URL repeating a path segment N times in a row, /blog/blog/blog/ "
                     "(at least 2; 0: no limit)"),
    ] = 3,
    trap_max_parameters: Annotated[
        int,
        typer.Option("--trap-max-parameters", min=0, help="Crawler traps: do not follow an "
                     "internal URL with more than N query parameters (0: no limit)"),
    ] = 10,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="No progress bar, no summary")
    ] = False,
) -> None:
    """Crawl one site breadth first into a crawl file (resumable)."""
    from fairfetch.audit.crawler import CrawlOptions, CrawlStats, crawl_site

    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InputError(url, "not an http(s) URL with a host")
    if Path(out).is_dir():
        raise InputError(str(out), "is a directory: name the crawl file in it (DIR/site.crawl)")
    if trap_max_repeats == 1:
        # Said here in the option's own name: the library's error names its field
        # (trap_max_segment_repeats), which the user never typed.
        raise InputError("--trap-max-repeats 1", "must be at least 2: a segment seen once is "
                         "every path (0 turns the test off)")
    settings = globals_of(ctx).settings()
    options = CrawlOptions(
        max_pages=max_pages, max_depth=max_depth, registrable_domain=domain, resume=resume,
        concurrency=concurrency, max_externals=max_externals, use_sitemaps=not no_sitemaps,
        parse_process=parse_process,
        trap_max_url_length=trap_max_url_length or None,
        trap_max_segment_repeats=trap_max_repeats or None,
        # 0 is no limit for each of the three, as a user reads it ("more than 0 parameters"
        # would keep out every URL with a query).
        trap_max_parameters=trap_max_parameters or None,
    )  # fmt: skip
    progress = Progress(
        TextColumn("[bold]audit[/bold]"), BarColumn(), MofNCompleteColumn(),
        TextColumn("queue {task.fields[queue]} · externals pending {task.fields[ext]}"),
        TimeElapsedColumn(),
        # A throttled site's wait (what, how long, until when): URLs may hold "[", no markup.
        TextColumn("{task.fields[waiting]}", markup=False),
        console=console, disable=quiet,
    )  # fmt: skip
    task = progress.add_task("crawl", total=None, queue=0, ext=0, waiting="")

    def on_progress(s: CrawlStats) -> None:
        progress.update(
            task, completed=s.pages_done, total=max(s.pages_queued, s.pages_done),
            queue=max(s.pages_queued - s.pages_done, 0), ext=s.externals_pending,
            waiting=s.waiting,
        )  # fmt: skip

    tune_for_crawling()  # the writer process, forked from this one, inherits it
    with progress:
        stats = asyncio.run(crawl_site(url, out, settings, options, progress=on_progress))
    if not quiet:
        traps = {k: n for k, n in stats.links_skipped.items() if k.startswith("trap: ")}
        console.print(
            f"{stats.pages_done} pages, {stats.externals_checked} URLs status-checked"
            + (f", not checked: {stats.not_checked}" if stats.not_checked else "")
            + (f", not followed (crawler traps): {traps}" if traps else "")
            + (f" — cut short by {stats.cut_short}" if stats.cut_short else "")
            + f" → {out}",
            markup=False,
        )


@audit_app.command("export")
def export(
    crawl_file: Annotated[Path, typer.Argument(help="Crawl file")],
    xlsx: Annotated[Path | None, typer.Option("--xlsx", help="Workbook to write")] = None,
    csv_dir: Annotated[Path | None, typer.Option("--csv", help="Directory for CSVs")] = None,
    threshold: Annotated[
        list[str] | None, typer.Option("--threshold", help="name=value (repeatable)")
    ] = None,
) -> None:
    """Export the crawl file and its findings as an XLSX workbook and/or CSVs."""
    from fairfetch.audit.export import export_crawl

    if xlsx is None and csv_dir is None:
        raise AuditError("nothing to do: give --xlsx OUT.xlsx and/or --csv DIR")
    if xlsx is not None and not xlsx.parent.is_dir():
        raise InputError(str(xlsx), f"directory {str(xlsx.parent)!r} does not exist")
    if xlsx is not None and xlsx.is_dir():
        raise InputError(str(xlsx), "is a directory")
    if csv_dir is not None and csv_dir.exists() and not csv_dir.is_dir():
        raise InputError(str(csv_dir), "exists and is not a directory")
    thresholds = _thresholds(threshold)
    tune_for_crawling()
    try:
        counts = export_crawl(crawl_file, xlsx=xlsx, csv_dir=csv_dir, thresholds=thresholds)
    except OSError as exc:
        raise InputError(exc.filename or str(xlsx or csv_dir), f"cannot write ({exc.strerror})"
                         ) from None
    except Exception as exc:
        # xlsxwriter wraps the OSError of its final write in its own FileCreateError.
        cause = exc.args[0] if exc.args else None
        if type(exc).__name__ == "FileCreateError" and isinstance(cause, OSError):
            raise InputError(str(xlsx), f"cannot write ({cause.strerror})") from None
        raise
    console.print(f"{len(counts)} sheets, {sum(counts.values())} rows")


#: Below this many columns (a pipe, a narrow terminal) the findings are a list, not a table: at
#: 80 a table left an example ten characters a line beside the widest rule id.
_TABLE_MIN_WIDTH = 120


def _findings_table(data: dict, examples: int) -> None:
    table = Table(title=f"Audit of {data['start_url']} — {data['pages']} pages")
    # A rule id is never cut ('description-too-…' would be two rules) and an example URL is
    # folded, never cut, so both can be found again; no word of the Issue text is cut either.
    widest_id = max((len(r["id"]) for r in data["rules"]), default=4)
    table.add_column("Severity")
    table.add_column("Rule", no_wrap=True, min_width=widest_id)
    table.add_column("Count")
    table.add_column("Issue", overflow="fold")
    table.add_column("Example", overflow="fold")
    for r in data["rules"]:
        shown = r["findings"][:examples]
        example = "\n".join(f"{f['url']} {f['detail']}".strip() for f in shown)
        table.add_row(
            f"[{_SEVERITY_STYLE[r['severity']]}]{r['severity']}[/]", r["id"], str(r["count"]),
            plain(r["title"]), plain(example),
        )  # fmt: skip
    console.print(table)


def _findings_list(data: dict, examples: int) -> None:
    """One line a rule (severity, id, count, title), its examples indented below it, each on a
    line of its own: never cut, never folded mid-URL by us (the terminal wraps long lines)."""
    console.print(f"Audit of {data['start_url']} — {data['pages']} pages", markup=False,
                  highlight=False)  # fmt: skip
    console.print("[dim]Severity Rule (findings)  Issue, then examples[/dim]", highlight=False)
    for r in data["rules"]:
        head = Text.assemble(
            (f"{r['severity']:<8}", _SEVERITY_STYLE[r["severity"]]),
            (r["id"], "bold"), f" ({r['count']})  ", str(r["title"]),
        )  # fmt: skip
        console.print(head, highlight=False)
        for f in r["findings"][:examples]:
            console.print(
                Text("        " + f"{f['url']} {f['detail']}".strip()), highlight=False
            )


@audit_app.command("report")
def report(
    crawl_file: Annotated[Path, typer.Argument(help="Crawl file")],
    as_json: Annotated[bool, typer.Option("--json", help="Every finding, as JSON")] = False,
    threshold: Annotated[
        list[str] | None, typer.Option("--threshold", help="name=value (repeatable)")
    ] = None,
    examples: Annotated[
        int, typer.Option("--examples", min=0, help="Example findings shown per rule")
    ] = 1,
) -> None:
    """The findings, worst first."""
    from fairfetch.audit.export import report_data

    thresholds = _thresholds(threshold)
    tune_for_crawling()
    data = report_data(crawl_file, thresholds)
    if as_json:
        # A finding's detail holds the site's own text (a meta robots value): JSON escapes C0
        # controls itself, and DEL and C1 (U+009B is a one-character CSI) are escaped here, as
        # the CLI's other --json outputs do, so a hostile page never reaches a terminal raw.
        # (Not print_json: it imports the store, 0.6 s before the first line.)
        text = json.dumps(data, indent=2, ensure_ascii=False)
        typer.echo(_RAW_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", text))
        return
    if console.width >= _TABLE_MIN_WIDTH:
        _findings_table(data, examples)
    else:
        _findings_list(data, examples)
    if not data["finished"]:
        # The command itself, ready to paste: "URL" and "FILE" left the user to find both.
        again = shlex.join(["fairfetch", "audit", "crawl", str(data["start_url"]), "--out",
                            str(crawl_file), "--resume"])
        console.print(
            "[yellow]Crawl did not finish:[/yellow] the findings cover the pages crawled so far; "
            f"continue it with `{escape(again)}` (and the options it was started with).",
            highlight=False,
        )
    if data["cut_short"]:
        console.print(f"[yellow]Crawl cut short by {escape(str(data['cut_short']))}:[/yellow]")
    for rule_id, why in data["silenced"].items():
        console.print(f"  {rule_id}: {why}", markup=False)
