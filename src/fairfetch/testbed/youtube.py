"""A YouTube-like video platform and WebSub hub for the testbed, with YouTube's quirks.

Hosts:

- ``www.youtube.test`` — channel feeds at ``/feeds/videos.xml?channel_id=UC…`` (Atom with the
  ``yt:`` and ``media:`` namespaces, newest 15 videos), advertising the hub and their own URL.
- ``pubsubhubbub.youtube.test`` — the hub: ``POST /subscribe`` (form) answers 202 and verifies
  intent asynchronously (GET to the callback with a challenge); it grants its own lease (5 days)
  whatever was asked for, and signs deliveries with ``sha1`` like YouTube's hub.

The quirks FeedMail met (seeds/003), each reproducible on demand:

- pings carry a custom payload naming one video (``yt:videoId``), not the feed;
- a ping can arrive before the video appears in the feed (``publish(..., appear_after=3600)``);
- pings for years-old videos whenever their title or description is edited (``edit(old)``);
- tombstone pings for deleted videos (``delete``);
- a non-2xx answer, or none (a subscriber that died under the request), makes the hub retry
  later, a bounded number of times (``retry_due``), on the testbed clock, so a test advances the
  clock instead of sleeping.

State lives per testbed in a :class:`YouTubeWorld` (``world_of(testbed)``); channels and their
history are a pure function of the seed. Over HTTP (for subprocesses and the demo):
``POST http://www.youtube.test/_control/publish?channel=UC…&appear_after=3600``, ``…/edit-old``,
``…/retry``, and ``GET …/_control/state``.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import weakref
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qs, urlsplit
from xml.sax.saxutils import escape, quoteattr

from aiohttp import ClientError, ClientSession, ClientTimeout, web

from fairfetch.testbed.catalog import FeedSpec
from fairfetch.testbed.names import rng, title
from fairfetch.testbed.registry import register

__all__ = ["FEED_HOST", "HUB_HOST", "Video", "YouTubeFamily", "YouTubeWorld", "world_of"]

FEED_HOST = "www.youtube.test"
HUB_HOST = "pubsubhubbub.youtube.test"
#: Channels served (and listed in the catalogue).
CHANNELS = 20
#: Videos in a channel's history before the testbed clock starts (one every ~3 days).
HISTORY = 40
#: Videos shown in a channel feed (YouTube shows 15).
FEED_ITEMS = 15
#: Lease the hub grants, whatever is asked (YouTube's is 5 days).
HUB_LEASE = 5 * 86400
#: Delivery attempts per ping, and the hub's retry spacing (testbed seconds, doubled each time).
MAX_ATTEMPTS = 8
RETRY_BASE = 300.0
DAY = 86400.0
YEAR = 365 * DAY
_ID_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).isoformat()


@dataclass
class Video:
    id: str
    channel: str
    title: str
    published: float
    updated: float
    #: When the video shows up in the channel feed; None: never (private, region-locked, …).
    appears_at: float | None
    deleted: bool = False

    @property
    def entry_id(self) -> str:
        return f"yt:video:{self.id}"


@dataclass
class HubSubscription:
    topic: str
    callback: str
    secret: str | None
    expires_at: float


@dataclass
class PendingPing:
    topic: str
    callback: str
    secret: str | None
    body: bytes
    video: str
    attempts: int
    next_at: float


@dataclass(frozen=True)
class DeliveryLog:
    video: str
    callback: str
    attempt: int
    status: int | None
    kind: str


@dataclass
class YouTubeWorld:
    """The platform's state for one running testbed."""

    testbed: Any
    channels: dict[str, list[Video]] = field(default_factory=dict)
    subscriptions: dict[tuple[str, str], HubSubscription] = field(default_factory=dict)
    pending: list[PendingPing] = field(default_factory=list)
    log: list[DeliveryLog] = field(default_factory=list)
    verifications: list[tuple[str, str, int]] = field(default_factory=list)
    #: False: the hub answers 503 to (un)subscribe requests (an outage at the hub).
    accepting: bool = True
    _counter: int = 0
    _changed: asyncio.Condition | None = None
    _tasks: set[asyncio.Task[Any]] = field(default_factory=set)

    # --- content -------------------------------------------------------------------------------

    def now(self) -> float:
        return float(self.testbed.clock.now())

    def channel_ids(self) -> list[str]:
        return list(self.channels)

    def feed_url(self, channel: str) -> str:
        return str(self.testbed.url(FEED_HOST, f"/feeds/videos.xml?channel_id={channel}"))

    def hub_url(self) -> str:
        return str(self.testbed.url(HUB_HOST, "/subscribe"))

    def visible(self, channel: str, now: float | None = None) -> list[Video]:
        t = self.now() if now is None else now
        shown = [v for v in self.channels[channel]
                 if not v.deleted and v.appears_at is not None and v.appears_at <= t]
        shown.sort(key=lambda v: (v.published, v.id), reverse=True)
        return shown[:FEED_ITEMS]

    def _new_id(self, channel: str) -> str:
        self._counter += 1
        r = rng(self.testbed.seed, "yt-video", channel, self._counter)
        return "".join(r.choice(_ID_CHARS) for _ in range(11))

    def publish(
        self,
        channel: str,
        *,
        appear_after: float | None = 0.0,
        published_ago: float = 0.0,
        updated_ago: float | None = None,
        name: str | None = None,
    ) -> Video:
        """A new video. ``appear_after``: seconds until it is in the feed (None: never)."""
        now = self.now()
        published = now - published_ago
        updated = now - (published_ago if updated_ago is None else updated_ago)
        video = Video(
            id=self._new_id(channel),
            channel=channel,
            title=name or f"Video {self._counter}",
            published=published,
            updated=updated,
            appears_at=None if appear_after is None else now + appear_after,
        )
        self.channels[channel].append(video)
        return video

    def old_video(self, channel: str) -> Video:
        """A years-old video of the channel (long gone from its feed)."""
        return min(self.channels[channel], key=lambda v: v.published)

    def video(self, video_id: str) -> Video:
        for videos in self.channels.values():
            for v in videos:
                if v.id == video_id:
                    return v
        raise KeyError(video_id)

    # --- the hub -------------------------------------------------------------------------------

    def subscribers(self, topic: str) -> list[HubSubscription]:
        now = self.now()
        return [s for (t, _), s in self.subscriptions.items() if t == topic and s.expires_at > now]

    def _payload(self, video: Video, kind: str) -> bytes:
        # YouTube's payload names its topic in a different URL form than the feed's own self
        # link: subscribers must route by callback, not by what the body claims.
        self_link = self.testbed.url(FEED_HOST, f"/xml/feeds/videos.xml?channel_id={video.channel}")
        head = (
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            '<feed xmlns:yt="http://www.youtube.com/xml/schemas/2015" '
            'xmlns:at="http://purl.org/atompub/tombstones/1.0" '
            'xmlns="http://www.w3.org/2005/Atom">\n'
            f'<link rel="hub" href={quoteattr(self.hub_url())}/>\n'
            f'<link rel="self" href={quoteattr(self_link)}/>\n'
            f"<title>YouTube video feed</title>\n<updated>{_iso(self.now())}</updated>\n"
        )
        if kind == "delete":
            return (head + f'<at:deleted-entry ref="{video.entry_id}" when="{_iso(self.now())}">'
                    f'<link href="http://{FEED_HOST}/watch?v={video.id}"/></at:deleted-entry>'
                    "</feed>\n").encode()
        return (
            head
            + f"<entry><id>{video.entry_id}</id><yt:videoId>{video.id}</yt:videoId>"
            f"<yt:channelId>{video.channel}</yt:channelId><title>{escape(video.title)}</title>"
            f'<link rel="alternate" href="http://{FEED_HOST}/watch?v={video.id}"/>'
            f"<author><name>{escape(video.channel)}</name></author>"
            f"<published>{_iso(video.published)}</published>"
            f"<updated>{_iso(video.updated)}</updated></entry></feed>\n"
        ).encode()

    async def ping(self, video: Video, kind: str = "new") -> list[int | None]:
        """Notify every subscriber of the video's channel; returns their answers."""
        body = self._payload(video, kind)
        topic = self.feed_url(video.channel)
        pings = [PendingPing(topic, s.callback, s.secret, body, video.id, 0, self.now())
                 for s in self.subscribers(topic)]
        return list(await asyncio.gather(*(self._deliver(p, kind) for p in pings)))

    async def publish_and_ping(self, channel: str, **kwargs: Any) -> tuple[Video, list[int | None]]:
        video = self.publish(channel, **kwargs)
        return video, await self.ping(video)

    async def edit(self, video: Video) -> list[int | None]:
        """A title/description edit: ``updated`` moves, ``published`` does not; the hub pings."""
        video.updated = self.now()
        return await self.ping(video, "edit")

    async def delete(self, video: Video) -> list[int | None]:
        video.deleted = True
        return await self.ping(video, "delete")

    async def retry_due(self) -> list[int | None]:
        """Redeliver the pings whose retry time has come on the testbed clock."""
        now = self.now()
        due = [p for p in self.pending if p.next_at <= now]
        self.pending = [p for p in self.pending if p.next_at > now]
        return list(await asyncio.gather(*(self._deliver(p, "retry") for p in due)))

    async def _deliver(self, p: PendingPing, kind: str) -> int | None:
        headers = {"Content-Type": "application/atom+xml"}
        if p.secret:
            digest = hmac.new(p.secret.encode(), p.body, hashlib.sha1).hexdigest()
            headers["X-Hub-Signature"] = f"sha1={digest}"
        p.attempts += 1
        status: int | None
        try:
            async with ClientSession(timeout=ClientTimeout(total=60)) as session, \
                    session.post(p.callback, data=p.body, headers=headers) as resp:
                await resp.read()
                status = resp.status
        except (TimeoutError, OSError, ClientError):
            # No answer (refused, reset, or closed after reading the ping: a subscriber killed
            # mid-request) is a failed delivery the hub retries, like a non-2xx.
            status = None
        self.log.append(DeliveryLog(p.video, p.callback, p.attempts, status, kind))
        if status == 410:
            self.subscriptions.pop((p.topic, p.callback), None)
        elif (status is None or not 200 <= status < 300) and p.attempts < MAX_ATTEMPTS:
            p.next_at = self.now() + RETRY_BASE * 2 ** (p.attempts - 1)
            self.pending.append(p)
        return status

    async def _verify(self, form: dict[str, str]) -> None:
        mode, topic, callback = form["hub.mode"], form["hub.topic"], form["hub.callback"]
        r = rng(self.testbed.seed, "challenge", self._counter, callback)
        self._counter += 1
        challenge = "".join(r.choice(_ID_CHARS) for _ in range(32))
        params = {"hub.mode": mode, "hub.topic": topic, "hub.challenge": challenge}
        if mode == "subscribe":
            params["hub.lease_seconds"] = str(HUB_LEASE)
        status = 0
        try:
            async with ClientSession(timeout=ClientTimeout(total=30)) as session, \
                    session.get(callback, params=params) as resp:
                text = await resp.text()
                status = resp.status
                ok = status == 200 and text == challenge
        except (TimeoutError, OSError, ClientError):
            ok = False
        if ok and mode == "subscribe":
            self.subscriptions[(topic, callback)] = HubSubscription(
                topic, callback, form.get("hub.secret") or None, self.now() + HUB_LEASE)
        elif ok:
            self.subscriptions.pop((topic, callback), None)
        self.verifications.append((mode, callback, status))
        await self._notify()

    async def _notify(self) -> None:
        cond = self._condition()
        async with cond:
            cond.notify_all()

    def _condition(self) -> asyncio.Condition:
        if self._changed is None:
            self._changed = asyncio.Condition()
        return self._changed

    async def wait_verifications(self, n: int) -> None:
        """Wait until the hub has made ``n`` verification requests (in total)."""
        cond = self._condition()
        async with cond:
            await cond.wait_for(lambda: len(self.verifications) >= n)

    async def handle_hub(self, request: web.Request) -> web.StreamResponse:
        if request.method != "POST" or request.path not in ("/subscribe", "/"):
            return web.Response(status=405 if request.path == "/subscribe" else 404)
        if not self.accepting:
            return web.Response(status=503, text="hub unavailable\n")
        form = {k: str(v) for k, v in (await request.post()).items()}
        mode = form.get("hub.mode")
        topic = form.get("hub.topic", "")
        if mode not in ("subscribe", "unsubscribe") or not form.get("hub.callback"):
            return web.Response(status=400, text="Invalid hub.mode or missing hub.callback\n")
        if urlsplit(topic).hostname != FEED_HOST:
            return web.Response(status=400, text="Invalid topic\n")
        task = asyncio.get_running_loop().create_task(self._verify(form))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return web.Response(status=202)

    # --- feeds ---------------------------------------------------------------------------------

    def render(self, channel: str) -> bytes:
        videos = self.visible(channel)
        url = self.feed_url(channel)
        name = _channel_title(self.testbed.seed, channel)
        parts = [
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            '<feed xmlns:yt="http://www.youtube.com/xml/schemas/2015" '
            'xmlns:media="http://search.yahoo.com/mrss/" xmlns="http://www.w3.org/2005/Atom">\n'
            f'<link rel="self" href={quoteattr(url)}/>\n'
            f'<link rel="hub" href={quoteattr(self.hub_url())}/>\n'
            f"<id>yt:channel:{channel}</id><yt:channelId>{channel}</yt:channelId>\n"
            f"<title>{escape(name)}</title>\n"
            f'<link rel="alternate" href="http://{FEED_HOST}/channel/{channel}"/>\n'
            f"<author><name>{escape(name)}</name>"
            f"<uri>http://{FEED_HOST}/channel/{channel}</uri></author>\n"
            f"<published>{_iso(min(v.published for v in self.channels[channel]))}</published>\n"
        ]
        for v in videos:
            parts.append(
                f"<entry><id>{v.entry_id}</id><yt:videoId>{v.id}</yt:videoId>"
                f"<yt:channelId>{channel}</yt:channelId><title>{escape(v.title)}</title>"
                f'<link rel="alternate" href="http://{FEED_HOST}/watch?v={v.id}"/>'
                f"<author><name>{escape(name)}</name></author>"
                f"<published>{_iso(v.published)}</published><updated>{_iso(v.updated)}</updated>"
                f"<media:group><media:title>{escape(v.title)}</media:title>"
                f'<media:content url="http://{FEED_HOST}/v/{v.id}" '
                'type="application/x-shockwave-flash" width="640" height="390"/>'
                f'<media:thumbnail url="http://i.{FEED_HOST}/vi/{v.id}/hqdefault.jpg" '
                'width="480" height="360"/></media:group></entry>\n'
            )
        parts.append("</feed>\n")
        return "".join(parts).encode()

    async def aclose(self) -> None:
        for task in list(self._tasks):
            with contextlib.suppress(Exception):
                await task


def _channel_id(seed: int, i: int) -> str:
    r = rng(seed, "yt-channel", i)
    return "UC" + "".join(r.choice(_ID_CHARS) for _ in range(22))


def _channel_title(seed: int, channel: str) -> str:
    return title(rng(seed, "yt-title", channel))


def _build(testbed: Any) -> YouTubeWorld:
    world = YouTubeWorld(testbed)
    # Dated from the clock's start, not from the first request to the platform: the same seed
    # at the same testbed time serves the same bytes, however long the clock ran before.
    start = float(testbed.clock.start)
    for i in range(CHANNELS):
        cid = _channel_id(testbed.seed, i)
        r = rng(testbed.seed, "yt-history", cid)
        times = [start - DAY * (0.5 + 2.5 * j + r.random()) for j in range(16)]  # recent
        times += [start - 60 * DAY - 4 * YEAR * j / (HISTORY - 16) - r.random() * DAY
                  for j in range(1, HISTORY - 16 + 1)]  # the back catalogue, years deep
        videos: list[Video] = []
        for k, ts in enumerate(sorted(times)):
            vid = "".join(r.choice(_ID_CHARS) for _ in range(11))
            videos.append(Video(vid, cid, f"{title(r)} #{k + 1}", ts, ts, ts))
        world.channels[cid] = videos
    return world


_WORLDS: weakref.WeakKeyDictionary[Any, YouTubeWorld] = weakref.WeakKeyDictionary()


def world_of(testbed: Any) -> YouTubeWorld:
    """The YouTube platform of this testbed (built from its seed on first use)."""
    world = _WORLDS.get(testbed)
    if world is None:
        world = _WORLDS[testbed] = _build(testbed)
    return world


async def _control(world: YouTubeWorld, request: web.Request) -> web.Response:
    """HTTP control for sync tests, subprocesses and the demo (POST to act, GET for state).

    ``/_control/publish?channel=UC…&appear_after=SECONDS`` (``appear_after=never``),
    ``/_control/edit-old?channel=UC…``, ``/_control/retry``, ``/_control/state``.
    """
    action = request.path[len("/_control/"):]
    q = request.query
    if action == "state":
        return web.json_response({
            "channels": world.channel_ids(),
            "subscriptions": len(world.subscriptions),
            "pending": len(world.pending),
            "deliveries": [vars(d) for d in world.log[-100:]],
        })
    if request.method != "POST":
        return web.Response(status=405)
    channel = q.get("channel") or world.channel_ids()[0]
    if channel not in world.channels:
        return web.Response(status=404, text="channel not found\n")
    if action == "publish":
        raw = q.get("appear_after", "0")
        try:
            appear_after = None if raw == "never" else float(raw)
        except ValueError:
            return web.Response(
                status=400, text=f"appear_after={raw!r}: seconds or 'never' is wanted\n")
        video, statuses = await world.publish_and_ping(channel, appear_after=appear_after)
        return web.json_response({"video": video.id, "entry_id": video.entry_id,
                                  "statuses": statuses})
    if action == "edit-old":
        old = world.old_video(channel)
        return web.json_response({"video": old.id, "statuses": await world.edit(old)})
    if action == "retry":
        return web.json_response({"statuses": await world.retry_due()})
    return web.Response(status=404, text="unknown control action\n")


class YouTubeFamily:
    name = "youtube"
    platform = "youtube"

    def matches(self, host: str) -> bool:
        return host in (FEED_HOST, HUB_HOST)

    async def handle(self, request: web.Request, host: str) -> web.StreamResponse:
        from fairfetch.testbed.server import CONTEXT

        world = world_of(request.app[CONTEXT])
        if host == HUB_HOST:
            return await world.handle_hub(request)
        if request.path.startswith("/_control/"):
            return await _control(world, request)
        if request.path == "/feeds/videos.xml":
            channel = (parse_qs(request.query_string).get("channel_id") or [""])[0]
            if channel not in world.channels:
                return web.Response(status=404, text="channel not found\n")
            return web.Response(body=world.render(channel),
                                content_type="application/atom+xml", charset="utf-8")
        return web.Response(status=404, text="not found\n")

    def catalog(self, testbed: Any) -> Iterable[FeedSpec]:
        world = world_of(testbed)
        for cid in world.channel_ids():
            yield FeedSpec(
                url=world.feed_url(cid),
                behaviour="youtube",
                kind="video",
                host=FEED_HOST,
                platform="youtube",
                format="atom10",
                title=_channel_title(testbed.seed, cid),
            )


FAMILY = register(YouTubeFamily())
