"""Where finished pages go: one writer, in the crawl process or in a process of its own.

``InProcessSink`` parses pages in the crawl's event loop and hands rows to a bounded queue
drained by one writer (``executemany`` batches in a worker thread). ``ProcessSink`` moves
parsing, row building and every write to a second process (one core fetches, the other parses
and writes): the crawl process sends fetched pages over a pipe, a few per message, written
from the event loop without ever blocking it, and gets back the URLs it must status-check on a
second pipe (in batches, asynchronously: fetching goes on meanwhile). At most ``max_pending``
pages (and ``max_pending_bytes`` of bodies) are handed over and not built yet (the bounded
queue), so a slow writer slows the crawl instead of filling memory. Either way a failed write
stops the crawl loudly.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import struct
from multiprocessing.connection import Connection
from multiprocessing.reduction import ForkingPickler as _ForkingPickler
from typing import Any, Protocol

from fairfetch.audit.crawlfile import CrawlFile
from fairfetch.audit.pagerows import Built, Fetched, PageRowBuilder
from fairfetch.audit.urls import Scope
from fairfetch.errors import AuditError

__all__ = ["InProcessSink", "ProcessSink", "Sink"]


class Sink(Protocol):
    def start(self) -> None: ...
    async def put(self, kind: str, payload: Any) -> None: ...
    async def submit_page(self, page_id: int, fetched: Fetched) -> asyncio.Future[Built]:
        """Hand a page over; the future resolves with what it built (already, in process)."""
        ...
    def push(self) -> None:
        """Hand over at once any page held back to travel with others: none will join it (a
        level's end), and the caller is about to wait for it."""
        ...
    async def flush(self) -> None: ...
    async def finalize(self) -> None:
        """Derived columns (CrawlFile.finalize), by the writer, once it is idle."""
        ...
    async def aclose(self) -> None: ...


class _Writer:
    """The one writer: a bounded queue drained in batches, each batch in a worker thread."""

    def __init__(self, cf: CrawlFile, batch_size: int) -> None:
        self.cf = cf
        self.batch_size = batch_size
        self.queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue(maxsize=batch_size * 2)
        self.task: asyncio.Task[None] | None = None
        self.error: Exception | None = None

    def start(self) -> None:
        self.task = asyncio.create_task(self._run())

    async def put(self, kind: str, payload: Any) -> None:
        if self.error is not None:
            raise AuditError(f"crawl file write failed: {self.error}") from self.error
        await self.queue.put((kind, payload))

    async def flush(self) -> None:
        await self.queue.join()
        if self.error is not None:
            raise AuditError(f"crawl file write failed: {self.error}") from self.error

    async def _run(self) -> None:
        while True:
            batch = [await self.queue.get()]
            while len(batch) < self.batch_size:
                try:
                    batch.append(self.queue.get_nowait())
                except asyncio.QueueEmpty:
                    break
            try:
                if self.error is None:
                    await asyncio.to_thread(self.cf.write_batch, batch)
            except Exception as exc:
                # Loud, not stuck: keep draining so no producer blocks, and make the next
                # put/flush raise with the cause.
                self.error = exc
            finally:
                for _ in batch:
                    self.queue.task_done()

    async def aclose(self) -> None:
        try:
            await self.flush()
        finally:
            if self.task is not None:
                self.task.cancel()


class InProcessSink:
    def __init__(self, cf: CrawlFile, scope: Scope, batch_size: int) -> None:
        self.writer = _Writer(cf, batch_size)
        self.builder = PageRowBuilder(
            scope, cf.asset_ids("images"), cf.asset_ids("resources"), cf.page_urls()
        )

    def start(self) -> None:
        self.writer.start()

    async def put(self, kind: str, payload: Any) -> None:
        if kind == "queue_many":
            self.builder.note_queued(payload)
        await self.writer.put(kind, payload)

    async def submit_page(self, page_id: int, fetched: Fetched) -> asyncio.Future[Built]:
        built = self.builder.build(page_id, fetched)
        # One item: the page's rows, and the count of the links it did not follow, land in one
        # transaction (a batch boundary between them lost the count to a kill).
        ops = list(built.ops)
        if built.skipped:
            ops.append(("count", ("links_skipped", built.skipped)))
        await self.writer.put("ops", ops)
        done: asyncio.Future[Built] = asyncio.get_running_loop().create_future()
        done.set_result(Built([], built.probes, built.rows, built.skipped, built.found, page_id))
        return done

    def push(self) -> None:
        pass  # built as handed over

    async def flush(self) -> None:
        await self.writer.flush()

    async def finalize(self) -> None:
        await self.writer.flush()
        await asyncio.to_thread(self.writer.cf.finalize)

    async def aclose(self) -> None:
        await self.writer.aclose()


# --- the writer process ---------------------------------------------------------------------
def _sink_main(
    inbox: Connection, conn: Connection, path: str, start_url: str, by_domain: bool, batch: int
) -> None:
    """Child process: build rows from pages (read from ``inbox``), apply every write, in
    arrival order; replies go back on ``conn``."""
    cf = CrawlFile(path, create=False)
    builder = PageRowBuilder(
        Scope(start_url, registrable_domain=by_domain),
        cf.asset_ids("images"),
        cf.asset_ids("resources"),
        cf.page_urls(),
    )
    ops: list[tuple[str, Any]] = []
    # Replies go back in batches, when the pipe is drained: one wake-up of the crawl process
    # per batch rather than per page (each wake-up cost the busy core a context switch).
    replies: list[
        tuple[int, list[tuple[str, str]], int, dict[str, int], list[tuple[str, str]]]
    ] = []

    def reply() -> None:
        if replies:
            conn.send(("built", replies))
            replies.clear()

    try:
        while True:
            # Replies go as soon as the pipe is drained (the crawl waits for them); writes wait
            # for a full batch or a flush. Writing whenever the pipe ran dry made transactions
            # of one or two pages, each rewriting the same b-tree pages into the WAL: 1,500
            # commits instead of 40 at 10k pages, +60 % write CPU.
            if replies and not inbox.poll():
                reply()
            if len(ops) >= batch:
                reply()
                cf.write_batch(ops)
                ops = []
            try:
                msg = inbox.recv()
            except EOFError:
                # The crawl process is gone (killed): stop at once without writing more, so a
                # resumed crawl never races with us. Unwritten pages are still queued in the
                # file and will be fetched again.
                return
            tag = msg[0]
            if tag == "pages":
                for page_id, fetched in msg[1]:
                    built = builder.build(page_id, fetched)
                    ops.extend(built.ops)
                    if built.skipped:  # counted in the page's own transaction
                        ops.append(("count", ("links_skipped", built.skipped)))
                    replies.append(
                        (page_id, built.probes, built.rows, built.skipped, built.found)
                    )
            elif tag == "op":
                if msg[1] == "queue_many":
                    builder.note_queued(msg[2])
                ops.append((msg[1], msg[2]))
            elif tag in ("flush", "finalize"):
                reply()
                if ops:
                    cf.write_batch(ops)
                    ops = []
                if tag == "finalize":
                    # Here, not in the crawl process: building the links_to index and the
                    # redirect chains is the writer's work and memory.
                    cf.finalize()
                conn.send(("flushed", msg[1]))
            elif tag == "close":
                reply()
                if ops:
                    cf.write_batch(ops)
                conn.send(("closed", None))
                return
    except Exception as exc:
        try:
            conn.send(("error", f"{type(exc).__name__}: {exc}"))
        except OSError:
            pass
        raise
    finally:
        cf.close()


def _sink_child(
    inbox: Connection, conn: Connection, parent_ends: tuple[Connection, ...], path: str,
    start_url: str, by_domain: bool, batch: int,
) -> None:
    # A forked child holds a copy of every descriptor of its parent, the crawl's ends of the
    # pipes included: unless those copies are closed, the page pipe never reports EOF when the
    # crawl process is killed, and this process waits on it forever with the crawl file open.
    for end in parent_ends:
        end.close()
    _sink_main(inbox, conn, path, start_url, by_domain, batch)


class ProcessSink:
    def __init__(
        self,
        path: str,
        start_url: str,
        by_domain: bool,
        batch_size: int,
        max_pending: int = 256,
        send_batch: int = 8,
        send_delay: float = 0.005,
        max_pending_bytes: int = 2 * 1024 * 1024,
    ) -> None:
        self.args = (path, start_url, by_domain, batch_size)
        # Pages handed over and not built yet: at most max_pending, and at most
        # max_pending_bytes of bodies (past it, only one more page goes in at a time).
        # Measured at 10k pages: 32 left the writer idle behind blocked sends (wall 5.1 s
        # median), 256-384 never waits (4.5 s).
        self.slots = asyncio.Semaphore(max_pending)
        self.max_pending_bytes = max_pending_bytes
        self.pending_bytes = 0
        self.bytes_freed = asyncio.Event()
        self.sizes: dict[int, int] = {}
        # Pages go out on a pipe of their own, written without blocking from the event loop:
        # what the pipe does not take waits in ``unsent`` until it is writable. A blocking send
        # could wait for the writer while the writer waits for us to read its replies (both
        # pipe buffers full); a sender thread avoided that but cost the crawl process a GIL
        # hand-over per message (a quarter of its samples sat in socket writes waiting for it).
        self.unsent = bytearray()
        self.out_fd = -1
        self.outbox_conn: Connection | None = None
        # Pages go over the pipe several at a time (send_batch, or after send_delay): every
        # message costs both processes a wake-up and a few system calls.
        self.send_batch = max(1, min(send_batch, max_pending))
        self.send_delay = send_delay
        self.outbox: list[tuple[int, Fetched]] = []
        self.send_timer: asyncio.TimerHandle | None = None
        self.waiting: dict[Any, asyncio.Future[Any]] = {}
        self.error: str | None = None
        self.conn: Connection | None = None
        self.proc: Any = None
        self.tokens = 0
        self.closing = False

    def start(self) -> None:
        # fork, not spawn: spawn re-imports the caller's __main__ (an unguarded script would run
        # its crawl again). The crawl starts the sink before any fetch, so no helper thread
        # exists yet; the child touches neither the event loop nor anything of the parent's.
        ctx = multiprocessing.get_context("fork")
        pages_in, pages_out = ctx.Pipe(duplex=False)
        replies_in, replies_out = ctx.Pipe(duplex=False)
        self.proc = ctx.Process(
            target=_sink_child,
            args=(pages_in, replies_out, (pages_out, replies_in), *self.args),
            daemon=True,
        )
        self.proc.start()
        pages_in.close()
        replies_out.close()
        self.conn = replies_in
        self.outbox_conn = pages_out
        self.out_fd = pages_out.fileno()
        os.set_blocking(self.out_fd, False)
        asyncio.get_running_loop().add_reader(replies_in.fileno(), self._readable)

    def _write(self, msg: tuple[Any, ...]) -> None:
        """Frame ``msg`` as Connection.send does (a 4-byte big-endian length, then the
        pickle) and write what the pipe takes now; the rest goes when it is writable."""
        data = _ForkingPickler.dumps(msg)
        if len(data) > 0x7FFFFFFF:
            raise AuditError(f"crawl file writer process: a message of {len(data)} bytes")
        frame = struct.pack("!i", len(data)) + bytes(data)
        if self.unsent:
            self.unsent += frame
            return
        try:
            n = os.write(self.out_fd, frame)
        except BlockingIOError:
            n = 0
        except OSError as exc:
            self._fail(f"pipe closed ({exc})")
            return
        if n < len(frame):
            self.unsent += memoryview(frame)[n:]
            asyncio.get_running_loop().add_writer(self.out_fd, self._writable)

    def _writable(self) -> None:
        try:
            n = os.write(self.out_fd, self.unsent)
        except BlockingIOError:
            return
        except OSError as exc:
            asyncio.get_running_loop().remove_writer(self.out_fd)
            self.unsent.clear()
            self._fail(f"pipe closed ({exc})")
            return
        del self.unsent[:n]
        if not self.unsent:
            asyncio.get_running_loop().remove_writer(self.out_fd)

    def _fail(self, why: str) -> None:
        if self.error is None:
            self.error = why
        for fut in self.waiting.values():
            if not fut.done():
                fut.set_exception(AuditError(f"crawl file writer process: {self.error}"))
        self.waiting.clear()
        self.bytes_freed.set()  # nobody waits for room that will never come

    def _readable(self) -> None:
        assert self.conn is not None
        try:
            while self.conn.poll():
                msg = self.conn.recv()
                tag = msg[0]
                if tag == "built":
                    for page_id, probes, rows, skipped, found in msg[1]:
                        fut = self.waiting.pop(("page", page_id), None)
                        self.slots.release()
                        self.pending_bytes -= self.sizes.pop(page_id, 0)
                        self.bytes_freed.set()
                        if fut is not None and not fut.done():
                            fut.set_result(Built([], probes, rows, skipped, found, page_id))
                elif tag in ("flushed", "closed"):
                    fut = self.waiting.pop((tag, msg[1]), None)
                    if fut is not None and not fut.done():
                        fut.set_result(None)
                elif tag == "error":
                    self._fail(msg[1])
        except (EOFError, OSError):
            asyncio.get_running_loop().remove_reader(self.conn.fileno())
            if not self.closing:
                self._fail("exited")

    def _check(self) -> Connection:
        if self.error is not None or self.conn is None:
            raise AuditError(f"crawl file writer process: {self.error or 'not started'}")
        return self.conn

    def _send(self, msg: tuple[Any, ...]) -> None:
        # Pages held back go first: the writer sees every message in the order it was made.
        if self.outbox:
            pages, self.outbox = self.outbox, []
            self._send_now(("pages", pages))
        self._send_now(msg)

    def _send_now(self, msg: tuple[Any, ...]) -> None:
        if self.send_timer is not None:
            self.send_timer.cancel()
            self.send_timer = None
        self._check()
        self._write(msg)

    def _send_outbox(self) -> None:
        self.send_timer = None
        if self.outbox:
            pages, self.outbox = self.outbox, []
            try:
                self._send_now(("pages", pages))
            except AuditError:
                pass  # _fail has failed every waiting page: the crawl raises from there

    async def put(self, kind: str, payload: Any) -> None:
        self._send(("op", kind, payload))

    async def submit_page(self, page_id: int, fetched: Fetched) -> asyncio.Future[Built]:
        # The slot bounds the pages in the pipe; the caller does not wait for the reply, so
        # fetching goes on while the other process parses.
        await self.slots.acquire()
        while self.pending_bytes > self.max_pending_bytes and self.error is None:
            # The bytes may be held here, waiting for company: room comes only once they go.
            self.push()
            self.bytes_freed.clear()
            await self.bytes_freed.wait()
        self._check()
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[Built] = loop.create_future()
        self.waiting[("page", page_id)] = fut
        size = len(fetched.body)
        self.sizes[page_id] = size
        self.pending_bytes += size
        self.outbox.append((page_id, fetched))
        if len(self.outbox) >= self.send_batch:
            self._send_outbox()
        elif self.send_timer is None:
            self.send_timer = loop.call_later(self.send_delay, self._send_outbox)
        return fut

    def push(self) -> None:
        if self.outbox:
            self._send_outbox()

    async def _roundtrip(self, tag: str) -> None:
        self.tokens += 1
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        reply = "closed" if tag == "close" else "flushed"
        self.waiting[(reply, None if tag == "close" else self.tokens)] = fut
        self._send((tag, self.tokens))
        await fut

    async def flush(self) -> None:
        await self._roundtrip("flush")

    async def finalize(self) -> None:
        await self._roundtrip("finalize")

    async def aclose(self) -> None:
        try:
            if self.error is None and self.conn is not None:
                self.closing = True
                await self._roundtrip("close")
        finally:
            if self.send_timer is not None:
                self.send_timer.cancel()
                self.send_timer = None
            loop = asyncio.get_running_loop()
            if self.outbox_conn is not None and not self.outbox_conn.closed:
                if self.unsent:
                    loop.remove_writer(self.out_fd)
                    self.unsent.clear()
                self.outbox_conn.close()  # the writer process sees EOF if it still reads
            if self.conn is not None and not self.conn.closed:
                loop.remove_reader(self.conn.fileno())
                self.conn.close()
            if self.proc is not None:
                await asyncio.to_thread(self.proc.join, 30)
        if self.error is not None:
            raise AuditError(f"crawl file writer process: {self.error}")
