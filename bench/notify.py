"""Notification benchmark: fairfetch against rss2email, same feeds, same new items, same SMTP.

The testbed's growing feeds (one reader per feed) publish new items as its clock advances; both
contenders first record the backlog (nobody mailed), then deliver the same new items to the same
local aiosmtpd sink, each in its own process. Printed:

- ours: notifications rendered and delivered per second (``send_due`` alone) and end to end
  (crawl + deliver), rss2email end to end (``r2e run``: fetch + mail), and the ratio;
- digests built per second for 10,000 readers (ours: gather + render + flatten; rss2email has
  only per-feed digests for one address, so no peer figure);
- after a run killed with SIGKILL midway and restarted: duplicates and misses of each.

What counts as delivered, missed or duplicated is judged against the testbed's own list of the
new items of each round (reader i of feed i, item title in the Subject), not against what our
crawler found: a miss of our crawler is a miss. Each contender's timed region starts before it
opens its own state (our store, rss2email's config and data file) and ends when its last mail is
accepted; interpreter start-up and imports are outside it on both sides. After each clock
advance the conductor fetches every feed once, so the testbed's rendering of the new items is
paid by neither contender. rss2email logs at
WARNING, as we do (its default, INFO, writes lines per feed and per mail).

Loopback only: the peers resolve ``*.test`` to 127.0.0.1 through a patched getaddrinfo, our
process through FAIRFETCH_RESOLVE. Absolute numbers are noise on a shared machine; ratios count.

    python bench/notify.py [--feeds 40] [--periods 10] [--readers 10000]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from email import policy
from email.header import decode_header, make_header
from email.parser import BytesParser
from pathlib import Path

from _loopback import patch_resolver, warm  # bench/ is on sys.path: these run as scripts

HERE = Path(__file__).resolve()
#: the sink reads headers only (the cost every contender's mail puts on it stays small)
_HEADERS = BytesParser(policy=policy.compat32)


# --- the sink ----------------------------------------------------------------------------------


class Sink:
    """aiosmtpd on 127.0.0.1: keeps (rcpt, subject, message-id) of every mail, by contender."""

    def __init__(self) -> None:
        from fairfetch.notify.sink import LoopbackController

        self.mails: list[tuple[str, str, str]] = []
        self.cond = threading.Condition()
        self.ctl = LoopbackController(self, hostname="127.0.0.1", port=0)

    async def handle_DATA(self, server, session, envelope):  # type: ignore[no-untyped-def]
        msg = _HEADERS.parsebytes(envelope.original_content, headersonly=True)
        with self.cond:
            subject = str(make_header(decode_header(str(msg["Subject"]))))  # RFC 2047 words
            self.mails.append((envelope.rcpt_tos[0], subject, str(msg["Message-ID"])))
            self.cond.notify_all()
        return "250 OK"

    def count(self, domain: str) -> int:
        with self.cond:
            return sum(1 for r, _, _ in self.mails if r.endswith(domain))

    def of(self, domain: str) -> list[tuple[str, str, str]]:
        with self.cond:
            return [m for m in self.mails if m[0].endswith(domain)]

    def wait_for(self, domain: str, n: int, proc: subprocess.Popen) -> None:  # type: ignore[type-arg]
        def done() -> bool:
            return self.count(domain) >= n or proc.poll() is not None

        def watcher() -> None:
            proc.wait()
            with self.cond:
                self.cond.notify_all()

        threading.Thread(target=watcher, daemon=True).start()
        with self.cond:
            self.cond.wait_for(done, timeout=300)


# --- roles run in subprocesses -----------------------------------------------------------------


def _settings(port: int, db: str, smtp: str):  # type: ignore[no-untyped-def]
    """What Testbed.settings gives (loopback only, *.test resolved there), without building a
    testbed: that cost 0.05 s of our timed set-up, which no user of fairfetch pays."""
    from fairfetch.config import Settings

    return Settings(
        allow_networks=("127.0.0.1/32",), resolve=("*.test:127.0.0.1",),
        db=db, smtp_url=smtp, public_url="https://news.example.test",
        mail_from="fairfetch <mail@news.example.test>",
    )


def role_ours(args: argparse.Namespace) -> None:
    import asyncio

    from fairfetch.crawl import Crawler, utcnow
    from fairfetch.net.politeness import politeness_key
    from fairfetch.notify.options import NotifyOptions
    from fairfetch.notify.service import send_due
    from fairfetch.store import notify_repo as repo
    from fairfetch.store import open_store

    urls = json.loads(Path(args.urls).read_text())
    # rss2email's timed run() reads its config and data file: our timed region opens our store.
    started = time.perf_counter()
    settings = _settings(args.port, args.db, args.smtp)
    store = open_store(args.db)
    out: dict[str, float] = {}

    async def go() -> None:
        async with Crawler(store, settings) as crawler:
            if args.step == "prepare":
                now = utcnow()
                for u in urls:
                    store.add_feed(u, now=now, politeness_key=politeness_key(u))
                await crawler.crawl_due()
                ids = [store.get_feed(u).id for u in urls]
                repo.import_subscriptions(
                    store, [{"email": f"reader{i}@ours.test", "feed_id": fid}
                            for i, fid in enumerate(ids)], utcnow())
                return
            ids = [store.get_feed(u).id for u in urls]
            t0 = time.perf_counter()
            out["setup_s"] = t0 - started
            await crawler.refresh(ids)
            t1 = time.perf_counter()
            out["crawl_s"] = t1 - t0
            out["queued"] = repo.count_pending(store).get("pending", 0)
            if args.step == "crawl":
                return
            report = await send_due(store, settings, options=NotifyOptions(rate=0.0))
            out["send_s"] = time.perf_counter() - t1
            out["sent"] = report.sent
            out["not_sent"] = report.retried + report.failed + report.cancelled + report.flagged
            out["deferred"] = int(report.deferred)

    asyncio.run(go())
    print(json.dumps(out))


def role_r2e(args: argparse.Namespace) -> None:
    patch_resolver()
    from rss2email.main import run

    base = ["-c", args.config, "-d", args.data]
    if args.step == "prepare":
        for i, u in enumerate(json.loads(Path(args.urls).read_text())):
            run([*base, "add", f"f{i}", u, f"reader{i}@r2e.test"])
        run([*base, "run", "--no-send"])
        return
    t0 = time.perf_counter()
    run([*base, "run"])
    print(json.dumps({"run_s": time.perf_counter() - t0}))


def role_digests(args: argparse.Namespace) -> None:
    """10,000 readers, each with a daily digest of 3 of the feeds; time building their issues."""
    from datetime import timedelta

    from fairfetch.crawl import utcnow
    from fairfetch.feeds.model import Entry
    from fairfetch.notify.service import _prepare
    from fairfetch.store import CrawlWrite, open_store
    from fairfetch.store import notify_repo as repo

    settings = _settings(args.port, args.db, args.smtp)
    store = open_store(args.db)
    now = utcnow()
    feed_ids = []
    for i in range(10):
        f, _ = store.add_feed(f"https://digest{i}.example.test/feed", now=now,
                              politeness_key=f"digest{i}")
        feed_ids.append(f.id)
    rows = [{"email": f"d{r}@ours.test", "feed_id": feed_ids[(r + k) % 10], "mode": "daily",
             "hour": r % 24, "tz": ["UTC", "Europe/Paris", "America/New_York"][r % 3]}
            for r in range(args.readers) for k in range(3)]
    repo.import_subscriptions(store, rows, now)
    t0 = time.perf_counter()
    for n, fid in enumerate(feed_ids):
        store.write([CrawlWrite(
            feed_id=fid, url=f"https://digest{n}.example.test/feed", at=now, outcome="ok",
            politeness_key="k", feed_changes={},
            entries=[Entry(id=f"urn:d:{n}:{j}", title=f"Item {j} of feed {n}",
                           link=f"https://digest{n}.example.test/{j}",
                           summary="<p>Some <b>text</b> for the digest.</p>", published=now)
                     for j in range(3)],
        )])
    enqueue_s = time.perf_counter() - t0
    due = repo.due_outbox(store, now + timedelta(days=2), 1_000_000)
    t1 = time.perf_counter()
    size = 0
    for row in due:
        prep = _prepare(store, settings, row, now)
        assert prep.msg is not None
        size += len(prep.msg.as_bytes())
    build_s = time.perf_counter() - t1
    print(json.dumps({"digests": len(due), "build_s": build_s, "enqueue_s": enqueue_s,
                      "bytes": size}))


# --- the conductor -----------------------------------------------------------------------------


def _py(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen:  # type: ignore[type-arg]
    return subprocess.Popen([sys.executable, str(HERE), *args], stdout=subprocess.PIPE,
                            env={**os.environ, **(env or {})}, text=True)


def _result(proc: subprocess.Popen) -> dict:  # type: ignore[type-arg]
    out, _ = proc.communicate(timeout=900)
    if proc.returncode != 0:
        raise SystemExit(f"role failed ({proc.returncode}): {proc.args}")
    lines = [ln for ln in out.splitlines() if ln.startswith("{")]
    return json.loads(lines[-1]) if lines else {}


def _r2e_config(tmp: str, smtp_port: int) -> str:
    path = Path(tmp) / "r2e.cfg"
    path.write_text(
        "[DEFAULT]\n"
        "from = r2e@r2e.test\n"
        "email-protocol = smtp\n"
        f"smtp-server = 127.0.0.1:{smtp_port}\n"
        "smtp-auth = False\nsmtp-ssl = False\n"
        "same-server-fetch-interval = 0\n"
        "html-mail = True\n"
        "verbose = warning\n"  # its default (info) logs every fetch and mail; ours logs neither
    )
    return str(path)


def _new_items(tb, specs, before: float, after: float) -> list[tuple[int, str]]:  # type: ignore[no-untyped-def]
    """(feed index, title) of every item published in (before, after] that the feed shows,
    from the testbed's own generator: the truth both contenders are judged against."""
    from fairfetch.testbed.render import entries_at, entry_count

    out = []
    for i, spec in enumerate(specs):
        site = tb.sites[spec.host]
        first_new = entry_count(site, tb.clock.start, before)
        count = entry_count(site, tb.clock.start, after)
        shown = entries_at(tb.seed, site, tb.clock.start, count, tb.options.items)
        out += [(i, e.title) for e in shown if e.index >= first_new]
    return out


def _judge(
    mails: list[tuple[str, str, str]], truth: list[tuple[int, str]], domain: str
) -> dict[str, int]:
    """Delivered, duplicates, misses and strays (mails matching no new item) of one contender."""
    want = {(f"reader{i}{domain}", title) for i, title in truth}
    got: Counter[tuple[str, str]] = Counter()
    strays = 0
    for rcpt, subject, _ in mails:
        hit = next((t for r, t in want if r == rcpt and t in subject), None)
        if hit is None:
            strays += 1
        else:
            got[(rcpt, hit)] += 1
    return {
        "delivered": len(got),
        "duplicates": sum(n - 1 for n in got.values()),
        "misses": len(want - set(got)),
        "strays": strays,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--feeds", type=int, default=40)
    ap.add_argument("--periods", type=int, default=10, help="new items per feed per round")
    ap.add_argument("--readers", type=int, default=10_000)
    ap.add_argument("--role")
    ap.add_argument("--step")
    ap.add_argument("--db")
    ap.add_argument("--port", type=int)
    ap.add_argument("--smtp")
    ap.add_argument("--urls")
    ap.add_argument("--config")
    ap.add_argument("--data")
    args = ap.parse_args()
    if args.role:
        {"ours": role_ours, "r2e": role_r2e, "digests": role_digests}[args.role](args)
        return

    from fairfetch.testing import testbed_thread

    sink = Sink()
    sink.ctl.start()
    tmp = tempfile.mkdtemp(prefix="bench-notify-")
    env = {"FAIRFETCH_NOTIFY_RATE": "0"}
    try:
        with testbed_thread(seed=1, growing=args.feeds) as tb:
            specs = tb.catalog(n=args.feeds, behaviours=["growing"])
            urls = [s.url for s in specs]
            period = specs[0].period or 600.0
            (Path(tmp) / "urls.json").write_text(json.dumps(urls))
            db = f"sqlite:///{tmp}/ours.db"
            smtp = f"smtp://127.0.0.1:{sink.ctl.port}"
            common = ["--port", str(tb.base_port), "--smtp", smtp, "--urls", f"{tmp}/urls.json"]
            ours = ["--role", "ours", "--db", db, *common]
            r2e = ["--role", "r2e", "--config", _r2e_config(tmp, int(sink.ctl.port)),
                   "--data", f"{tmp}/r2e.json", *common]

            # backlog: recorded, nobody mailed
            _result(_py(*ours, "--step", "prepare", env=env))
            _result(_py(*r2e, "--step", "prepare"))
            assert not sink.mails, "a backlog was mailed"

            # round 1: the same new items, timed
            t_before = tb.clock.now()
            tb.clock.advance(period * args.periods)
            truth1 = _new_items(tb, specs, t_before, tb.clock.now())
            warm(tb.base_port, urls)
            t0 = time.perf_counter()
            mine = _result(_py(*ours, "--step", "all", env=env))
            mine_wall = time.perf_counter() - t0
            t0 = time.perf_counter()
            peer = _result(_py(*r2e, "--step", "run"))
            peer_wall = time.perf_counter() - t0
            n_ours, n_r2e = sink.count("@ours.test"), sink.count("@r2e.test")
            round1 = {d: _judge(sink.of(d), truth1, d) for d in ("@ours.test", "@r2e.test")}

            # round 2: new items again; each notifier is SIGKILLed midway, then restarted
            t_before = tb.clock.now()
            tb.clock.advance(period * args.periods)
            truth2 = _new_items(tb, specs, t_before, tb.clock.now())
            warm(tb.base_port, urls)
            before = {d: len(sink.of(d)) for d in ("@ours.test", "@r2e.test")}
            crawl2 = _result(_py(*ours, "--step", "crawl", env=env))
            half = len(truth2) // 2
            fair = [str(HERE.parent.parent / ".venv" / "bin" / "fairfetch")]
            if not Path(fair[0]).exists():
                fair = [sys.executable, "-m", "fairfetch.cli"]
            p = subprocess.Popen([*fair, "--db", db, "notify", "send-due"],
                                 env={**os.environ, **env, **tb.env(), "FAIRFETCH_SMTP_URL": smtp},
                                 stdout=subprocess.DEVNULL)
            sink.wait_for("@ours.test", before["@ours.test"] + half, p)
            p.send_signal(signal.SIGKILL)
            p.wait()
            subprocess.run([*fair, "--db", db, "notify", "send-due"], check=True,
                           env={**os.environ, **env, **tb.env(), "FAIRFETCH_SMTP_URL": smtp},
                           stdout=subprocess.DEVNULL)
            q = _py(*r2e, "--step", "run")
            sink.wait_for("@r2e.test", before["@r2e.test"] + half, q)
            q.send_signal(signal.SIGKILL)
            q.wait()
            _result(_py(*r2e, "--step", "run"))
            # what each should have delivered: every new item of round 2, once, to its reader
            round2 = {d: _judge(sink.of(d)[before[d]:], truth2, d) for d in before}

            dig = _result(_py("--role", "digests", "--db", f"sqlite:///{tmp}/digests.db",
                              "--readers", str(args.readers), *common, env=env))
    finally:
        sink.ctl.stop()

    flags = []
    for d, name in (("@ours.test", "fairfetch"), ("@r2e.test", "rss2email")):
        j = round1[d]
        if j["delivered"] != len(truth1) or j["duplicates"] or j["strays"]:
            flags.append(f"{name} round 1: {j['delivered']} of {len(truth1)} new items delivered, "
                         f"{j['duplicates']} duplicates, {j['strays']} mails matching no new item")
    if mine.get("not_sent") or mine.get("deferred"):
        flags.append(f"fairfetch round 1: send_due did not send {int(mine['not_sent'])}"
                     + (" and stopped early (deferred)" if mine.get("deferred") else ""))
    send_rate = mine["sent"] / mine["send_s"]
    e2e_s = mine["setup_s"] + mine["crawl_s"] + mine["send_s"]
    e2e_ours = n_ours / e2e_s
    e2e_r2e = n_r2e / peer["run_s"] if peer.get("run_s") else 0.0
    print(f"feeds: {args.feeds} growing testbed feeds, one reader each; "
          f"{len(truth1)} new items in round 1 (the testbed's count)")
    print(f"delivered in round 1: fairfetch {n_ours}, rss2email {n_r2e}")
    print(f"fairfetch send_due (render + SMTP): {send_rate:8.1f} notifications/s")
    print(f"fairfetch open + crawl + deliver:   {e2e_ours:8.1f} notifications/s "
          f"(open {mine['setup_s']:.2f}s; process wall {mine_wall:.2f}s)")
    print(f"rss2email run (load + fetch + mail):{e2e_r2e:8.1f} notifications/s "
          f"(process wall {peer_wall:.2f}s)")
    if e2e_r2e and e2e_ours:
        note = " (over unequal deliveries: see FLAG)" if flags else ""
        print(f"ratio fairfetch / rss2email (end to end): {e2e_ours / e2e_r2e:.2f}x{note}")
    print(f"digests for {args.readers} readers: {dig['digests']} issues built in "
          f"{dig['build_s']:.2f}s = {dig['digests'] / dig['build_s']:.0f} digests/s "
          f"(enqueue in the crawl transaction: {dig['enqueue_s']:.2f}s)")
    # against the testbed's new items (one per reader per item), not what our crawler found
    print(f"killed midway and restarted ({len(truth2)} new notifications expected each; our "
          f"crawler queued {int(crawl2['queued'])}):")
    for d, name in (("@ours.test", "fairfetch"), ("@r2e.test", "rss2email")):
        j = round2[d]
        print(f"  {name}: {j['delivered']} delivered, {j['duplicates']} duplicates, "
              f"{j['misses']} misses, {j['strays']} mails matching no new item")
    for f in flags:
        print(f"  FLAG: {f}")


if __name__ == "__main__":
    main()
