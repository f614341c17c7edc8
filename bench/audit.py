"""Site-audit benchmark: fairfetch's audit crawl next to a Scrapy CrawlSpider, same run, same site.

    .venv/bin/python bench/audit.py [--pages 10000] [--concurrency 8] [--no-scrapy]

The testbed's audit website (fairfetch.testbed.site) is served by its own process on a
dedicated loopback port, every page pre-rendered to bytes before the first request, so both
crawlers measure against the same server. On a 2-core machine the server still shares the
cores with the crawler (it costs ~0.1 ms of CPU a page). Each crawler runs in its own process
and reports its own peak RSS.

- fairfetch: ``crawl_site`` through the real Fetcher (perimeter, robots.txt, politeness),
  writing the full crawl file (pages, links, images, resources and their pairs, redirects,
  externals, sitemaps) — in process, and with parsing and writes in a second process (the
  default on two cores or more) — then the rules catalogue over it in a process of its own,
  as ``fairfetch audit report`` runs after ``audit crawl`` (its start-up is in the rules'
  time; its peak RSS is reported separately from the crawl's).
- Scrapy: a CrawlSpider following internal links and extracting title and links (Scrapy keeps
  no crawl file), ROBOTSTXT_OBEY and the same concurrency.

Figures: pages/s, items/s (rows written: pages + links + page–image + page–resource pairs),
peak memory, and the ratio to Scrapy. Traffic stays on 127.0.0.1.

- Pages: every URL crawled is a page in our count (redirects, errors and pages robots.txt
  keeps out too); Scrapy's callback sees only 2xx answers. The ratio uses each side's 2xx
  pages over its time. Scrapy does not retry (we record a 500; it retried each twice).
- Memory: each side's processes *together*, at their peak (sampled every 50 ms): the main
  process's RSS plus its children's private memory. The per-process peaks (ru_maxrss) are
  printed beside it; with the writer process, the crawl's peak alone is not what the job takes.
- CPU: from the start of each side's crawl (not its imports).
- A contender that fails is named (FAILED, with its stderr) and no ratio is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve()


# --- the site server ---------------------------------------------------------------------------
def serve(pages: int) -> None:
    """Serve the audit site family; an IP Host header means the ``s<pages>`` site (Scrapy)."""
    import asyncio

    from aiohttp import web

    from fairfetch.testbed.site import FAMILY, prerender

    default_host = f"s{pages}.acme-audit.test"

    async def handler(request: web.Request) -> web.StreamResponse:
        host = request.headers.get("Host", "").rsplit(":", 1)[0].lower()
        if host.replace(".", "").isdigit():
            host = default_host
        if not FAMILY.matches(host):
            return web.Response(status=421)
        return await FAMILY.handle(request, host)

    async def main() -> None:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", handler)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0, backlog=1024)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        # Every page rendered before the first request: the server's CPU then goes to HTTP
        # only, the same for both crawlers.
        prerender(pages, port)
        print(port, flush=True)
        await asyncio.Event().wait()

    asyncio.run(main())


class _Together:
    """Peak memory of this process and its children *together*, sampled every 50 ms.

    ru_maxrss is per process: with parsing in a second process, the crawl's and the writer's
    peaks side by side are not what the job takes. Their RSS summed counts twice the pages the
    forked writer still shares with the crawl process; PSS would divide shared libraries among
    every process on the machine that maps them (other Python processes included), so it
    moves with what else runs. Reported: this process's RSS plus the children's private
    memory (USS: pages no other process maps), comparable with a single process's RSS; and the
    RSS sum, an upper bound."""

    def __init__(self) -> None:
        import threading

        self.rss_sum = self.held = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @staticmethod
    def _read(pid: int) -> tuple[float, float]:
        """(RSS, USS) of ``pid`` in MiB; zeros when it has just exited."""
        rss = uss = 0.0
        try:
            with open(f"/proc/{pid}/smaps_rollup") as f:
                for ln in f:
                    if ln.startswith("Rss:"):
                        rss = int(ln.split()[1]) / 1024
                    elif ln.startswith(("Private_Clean:", "Private_Dirty:")):
                        uss += int(ln.split()[1]) / 1024
        except OSError:
            pass
        return rss, uss

    def _sample(self) -> None:
        me = os.getpid()
        try:
            children = Path(f"/proc/{me}/task/{me}/children").read_text().split()
        except OSError:
            children = []
        rss, _ = self._read(me)
        rss_sum = held = rss
        for pid in map(int, children):
            r, u = self._read(pid)
            rss_sum, held = rss_sum + r, held + u
        self.rss_sum, self.held = max(self.rss_sum, rss_sum), max(self.held, held)

    def _run(self) -> None:
        while not self._stop.wait(0.05):
            self._sample()

    def __enter__(self) -> _Together:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()


def _peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _cpu(who: int) -> float:
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime


def _server_cpu(pid: int) -> float:
    """CPU seconds the site server has used (it serves both contenders: what each one's crawl
    cost it is read before and after)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# --- fairfetch ---------------------------------------------------------------------------------
def run_ours(url: str, out: str, concurrency: int, parse_process: bool) -> None:
    import asyncio

    from fairfetch.audit.crawler import CrawlOptions, crawl_site
    from fairfetch.config import Settings
    from fairfetch.gctune import tune_for_crawling

    settings = Settings(allow_networks=("127.0.0.1/32",), resolve=("*.test:127.0.0.1",))
    tune_for_crawling()  # as `fairfetch audit crawl` does before its work
    cpu0 = _cpu(resource.RUSAGE_SELF), _cpu(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    with _Together() as together:
        stats = asyncio.run(
            crawl_site(
                url, out, settings,
                CrawlOptions(concurrency=concurrency, parse_process=parse_process),
            )
        )  # fmt: skip
    t1 = time.perf_counter()
    crawl_cpu = _cpu(resource.RUSAGE_SELF) - cpu0[0]
    writer_cpu = _cpu(resource.RUSAGE_CHILDREN) - cpu0[1]
    crawl_rss = _peak_rss_mib()
    child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    # The rules run in a process of their own, as ``fairfetch audit report`` does after
    # ``audit crawl``; its start-up and imports count in the rules' time.
    rules = json.loads(
        subprocess.run(
            [sys.executable, str(HERE), "--rules", out], capture_output=True, text=True,
            check=True,
        ).stdout.strip().splitlines()[-1]
    )  # fmt: skip
    t2 = time.perf_counter()
    import sqlite3

    with sqlite3.connect(out) as con:
        # The pages Scrapy counts: answers in 2xx that reached its callback (ours also counts
        # redirects, errors and pages robots.txt keeps out).
        ok_pages = con.execute(
            "SELECT COUNT(*) FROM pages WHERE status BETWEEN 200 AND 299"
        ).fetchone()[0]
    print(json.dumps({
        "pages": stats.pages_done, "ok_pages": ok_pages, "items": rules["items"],
        "crawl_s": t1 - t0, "together_rss_mib": together.rss_sum, "together_mib": together.held,
        "rules_s": t2 - t1, "findings": rules["findings"],
        "rss_mib": max(crawl_rss, rules["rss_mib"]), "crawl_rss_mib": crawl_rss,
        "rules_rss_mib": rules["rss_mib"], "child_rss_mib": child,
        "file_mib": os.path.getsize(out) / 2**20, "cpu_s": crawl_cpu, "child_cpu_s": writer_cpu,
    }))  # fmt: skip


def run_rules_only(path: str) -> None:
    import sqlite3

    from fairfetch.audit.rules import run_rules
    from fairfetch.audit.view import load_view
    from fairfetch.gctune import tune_for_crawling

    tune_for_crawling()  # as `fairfetch audit report` does before its work
    con = sqlite3.connect(path)
    con.execute("PRAGMA cache_size=-512")  # as load_view does: counting rows is one pass
    run = run_rules(load_view(con))
    items = sum(
        con.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
        for t in ("pages", "links", "page_images", "page_resources")
    )
    # VmHWM, not ru_maxrss: Linux keeps ru_maxrss across exec, so this process would report
    # the crawl process's peak it was started from.
    with open("/proc/self/status") as status:
        hwm = next(int(ln.split()[1]) for ln in status if ln.startswith("VmHWM:")) / 1024
    print(json.dumps({"findings": len(run.findings), "items": items, "rss_mib": hwm}))


# --- Scrapy ------------------------------------------------------------------------------------
def run_scrapy(url: str, concurrency: int) -> None:
    from scrapy.crawler import CrawlerProcess
    from scrapy.linkextractors import LinkExtractor
    from scrapy.spiders import CrawlSpider, Rule

    counts = {"pages": 0, "items": 0}

    class SiteSpider(CrawlSpider):
        name = "site"
        allowed_domains = ["127.0.0.1"]
        start_urls = [url]
        rules = (Rule(LinkExtractor(), callback="parse_item", follow=True),)

        def parse_start_url(self, response):  # type: ignore[no-untyped-def]
            return self.parse_item(response)

        def parse_item(self, response):  # type: ignore[no-untyped-def]
            counts["pages"] += 1
            links = response.css("a::attr(href)").getall()
            counts["items"] += 1 + len(links)
            yield {"url": response.url, "title": response.css("title::text").get(),
                   "links": len(links)}

    process = CrawlerProcess(settings={
        "LOG_LEVEL": "ERROR", "ROBOTSTXT_OBEY": True, "CONCURRENT_REQUESTS": concurrency * 2,
        "CONCURRENT_REQUESTS_PER_DOMAIN": concurrency, "TELNETCONSOLE_ENABLED": False,
        "USER_AGENT": "scrapy-bench", "DOWNLOAD_DELAY": 0, "COOKIES_ENABLED": False,
        "REQUEST_FINGERPRINTER_IMPLEMENTATION": "2.7",
        # fairfetch's audit does not retry a 500 (it records it); Scrapy retried each twice.
        "RETRY_ENABLED": False,
    })  # fmt: skip
    cpu0 = _cpu(resource.RUSAGE_SELF)  # from the crawl's start, as ours: not the imports
    t0 = time.perf_counter()
    with _Together() as together:
        process.crawl(SiteSpider)
        process.start()
    t1 = time.perf_counter()
    print(json.dumps({"pages": counts["pages"], "ok_pages": counts["pages"],
                      "items": counts["items"], "crawl_s": t1 - t0, "rules_s": 0.0,
                      "rss_mib": _peak_rss_mib(), "together_rss_mib": together.rss_sum,
                      "together_mib": together.held,
                      "cpu_s": _cpu(resource.RUSAGE_SELF) - cpu0}))


# --- driver ------------------------------------------------------------------------------------
def _child(*args: str) -> dict | None:
    """One contender's run, or None (said on stderr) when it failed: a crash must end in a
    line that says so, not in a traceback that loses the other side's figures, nor a ratio."""
    done = subprocess.run([sys.executable, str(HERE), *args], capture_output=True, text=True)
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        tail = "\n".join(done.stderr.strip().splitlines()[-8:])
        print(f"FAILED: {args[0]} exited {done.returncode}:\n{tail}", file=sys.stderr)
        return None
    return dict(json.loads(lines[-1]))


def _best(old: dict | None, new: dict) -> dict:
    if old is None:
        return new
    best = dict(new if new["crawl_s"] < old["crawl_s"] else old)
    for key in ("rss_mib", "crawl_rss_mib", "rules_rss_mib", "child_rss_mib",
                "together_rss_mib", "together_mib"):
        if key in new:
            best[key] = max(old.get(key, 0.0), new[key])
    return best


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--pages", type=int, default=10_000)
    p.add_argument("--concurrency", type=int, default=8)
    p.add_argument("--no-scrapy", action="store_true")
    p.add_argument("--repeat", type=int, default=2, help="rounds; each keeps its best")
    p.add_argument("--parse-process", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--modes", default="inprocess,process",
                   help="fairfetch modes to run: inprocess, process (parse in a 2nd process)")
    p.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    p.add_argument("--ours", nargs=2, help=argparse.SUPPRESS)
    p.add_argument("--scrapy", help=argparse.SUPPRESS)
    p.add_argument("--rules", help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.serve is not None:
        return serve(a.serve)
    if a.ours:
        return run_ours(a.ours[0], a.ours[1], a.concurrency, a.parse_process)
    if a.scrapy:
        return run_scrapy(a.scrapy, a.concurrency)
    if a.rules:
        return run_rules_only(a.rules)

    server = subprocess.Popen(
        [sys.executable, str(HERE), "--serve", str(a.pages)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        # Rounds interleave the contenders so a burst of load from other jobs on the machine
        # hits both; each contender keeps its best round (peak RSS: its worst).
        results: dict[str, dict] = {}
        peer = None
        failed: list[str] = []
        for _ in range(a.repeat):
            for mode in a.modes.split(","):
                with tempfile.TemporaryDirectory() as tmp:
                    crawl_file = str(Path(tmp) / "bench.db")
                    extra = ["--parse-process"] if mode == "process" else []
                    served = _server_cpu(server.pid)
                    r = _child(
                        "--ours", f"http://s{a.pages}.acme-audit.test:{port}/", crawl_file,
                        "--concurrency", str(a.concurrency), *extra,
                    )
                    if r is None:
                        failed.append(f"fairfetch ({mode})")
                        continue
                    r["server_cpu_s"] = _server_cpu(server.pid) - served
                results[mode] = _best(results.get(mode), r)
            if not a.no_scrapy:
                served = _server_cpu(server.pid)
                r = _child(
                    "--scrapy", f"http://127.0.0.1:{port}/", "--concurrency", str(a.concurrency)
                )
                if r is None:
                    failed.append("Scrapy")
                    continue
                r["server_cpu_s"] = _server_cpu(server.pid) - served
                peer = _best(peer, r)
    finally:
        server.terminate()
        server.wait()

    def line(name: str, r: dict, with_rules: bool = False) -> str:
        secs = r["crawl_s"] + (r["rules_s"] if with_rules else 0.0)
        # The memory column is the crawl's processes together (see _Together); the rules run
        # after the crawl, in a process of their own.
        peak = max(r["together_mib"], r.get("rules_rss_mib", 0.0) if with_rules else 0.0)
        return (f"{name:<34} {r['pages']:>7} pages {r['pages'] / secs:>9.0f} pages/s "
                f"{r['items'] / secs:>10.0f} items/s {peak:>7.1f} MiB peak")

    print(f"site: {a.pages} generated pages (~20 links each), concurrency {a.concurrency}, "
          f"best of {a.repeat} interleaved rounds")
    print(f"{'':34} pages: every URL crawled; ratios use the 2xx pages of each side (those "
          "Scrapy's callback sees); memory: peak of a side's processes together (RSS + the "
          "children's private memory)")
    for name in failed:
        print(f"FAILED: {name} (see stderr); it has no figures in the rounds it failed")
    peer_rate = peer["ok_pages"] / peer["crawl_s"] if peer else None
    for mode, ours in results.items():
        label = "fairfetch" + (" +parse process" if mode == "process" else "")
        print(line(f"{label} (crawl file)", ours))
        print(line(f"{label} (crawl + rules)", ours, with_rules=True))
        writer_rss = (
            f" + writer process {ours['child_rss_mib']:.1f} MiB" if mode == "process" else ""
        )
        print(f"{'':34} {ours['findings']} findings, crawl file {ours['file_mib']:.1f} MiB, "
              f"{ours['ok_pages']} pages in 2xx; peak RSS per process: crawl "
              f"{ours['crawl_rss_mib']:.1f} MiB{writer_rss}, rules "
              f"{ours['rules_rss_mib']:.1f} MiB")
        print(f"{'':34} the crawl's processes together at their peak: "
              f"{ours['together_mib']:.1f} MiB (RSS + the writer's private memory); RSS summed "
              f"{ours['together_rss_mib']:.1f} MiB (the pages they share counted twice)")
        writer = f", writer process {ours['child_cpu_s']:.2f}" if mode == "process" else ""
        print(f"{'':34} CPU s of the crawl: crawl {ours['cpu_s']:.2f}{writer}, "
              f"site server {ours['server_cpu_s']:.2f} (two cores: the crawl is CPU-bound "
              "when their sum / 2 nears its time)")
        if peer_rate and not failed:
            rate = ours["ok_pages"] / (ours["crawl_s"] + ours["rules_s"])
            print(f"{'':34} ratio 2xx pages/s (crawl + rules) vs Scrapy: "
                  f"{rate / peer_rate:.2f}x")
    if peer is not None:
        print(line("Scrapy CrawlSpider (no file)", peer))
        print(f"{'':34} {peer['ok_pages']} pages in 2xx; CPU s from the crawl's start: Scrapy "
              f"{peer['cpu_s']:.2f}, site server {peer['server_cpu_s']:.2f}; peak RSS "
              f"{peer['rss_mib']:.1f} MiB")


if __name__ == "__main__":
    main()
