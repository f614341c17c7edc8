"""robots.txt copies that outlive the process (RobotsCache with a RobotsBacking).

Each RobotsCache here stands for one process (`crawl --once` run by cron); the backing is an
in-memory implementation of the protocol (the store's own is tested in tests/unit/store and end to
end in tests/integration/crawl).
"""

from __future__ import annotations

from aiohttp import web

from fairfetch.net.robots import RobotsCache, RobotsCopy

from .conftest import make_fetcher, net_settings, serve

ROBOTS = b"User-agent: *\nDisallow: /private\n"


class MemoryBacking:
    def __init__(self) -> None:
        self.copies: dict[str, RobotsCopy] = {}
        self.loads: list[str] = []
        self.fail = False

    async def load(self, origin: str) -> RobotsCopy | None:
        self.loads.append(origin)
        if self.fail:
            raise OSError("database is locked")
        return self.copies.get(origin)

    def save(self, copy: RobotsCopy) -> None:
        self.copies[copy.origin] = copy


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


async def page(request: web.Request) -> web.Response:
    return web.Response(text="page")


def server(state: dict[str, int]) -> dict[str, object]:
    async def robots(request: web.Request) -> web.Response:
        return web.Response(status=state["status"], body=ROBOTS, content_type="text/plain")

    return {"/robots.txt": robots, "/public": page, "/private/x": page}


async def run(cache: RobotsCache, urls: list[str]) -> list[str | None]:
    f = make_fetcher(net_settings(), robots=cache)
    try:
        return [(await f.fetch(u, check_robots=True)).error_kind for u in urls]
    finally:
        await f.aclose()


async def test_a_second_process_uses_the_stored_copy_without_asking_again() -> None:
    backing = MemoryBacking()
    wall = Clock(1_800_000_000.0)
    async with serve(server({"status": 200})) as srv:  # type: ignore[arg-type]
        urls = [srv.url("/public"), srv.url("/private/x")]
        first = await run(RobotsCache(wall=wall, backing=backing), urls)
        assert srv.hits["/robots.txt"] == 1
        (copy,) = backing.copies.values()
        assert (copy.state, copy.status, copy.body) == ("parsed", 200, ROBOTS.decode())
        wall.now += 3600  # an hour later, a new process (a fresh monotonic clock too)
        second = await run(RobotsCache(clock=Clock(5.0), wall=wall, backing=backing), urls)
    assert first == second == [None, "robots"]
    assert srv.hits["/robots.txt"] == 1
    assert srv.hits["/private/x"] == 0


async def test_a_copy_older_than_the_ttl_is_fetched_again_and_replaced() -> None:
    backing = MemoryBacking()
    wall = Clock(1_800_000_000.0)
    async with serve(server({"status": 200})) as srv:  # type: ignore[arg-type]
        await run(RobotsCache(wall=wall, backing=backing, ttl=600.0), [srv.url("/public")])
        wall.now += 601
        await run(RobotsCache(wall=wall, backing=backing, ttl=600.0), [srv.url("/public")])
    assert srv.hits["/robots.txt"] == 2
    (copy,) = backing.copies.values()
    assert copy.fetched_at == wall.now


async def test_an_expired_copy_stands_in_when_robots_txt_is_down_and_is_not_overwritten() -> None:
    backing = MemoryBacking()
    wall = Clock(1_800_000_000.0)
    state = {"status": 200}
    async with serve(server(state)) as srv:  # type: ignore[arg-type]
        urls = [srv.url("/public"), srv.url("/private/x")]
        await run(RobotsCache(wall=wall, backing=backing, ttl=600.0), urls)
        good = next(iter(backing.copies.values()))
        state["status"] = 500
        wall.now += 3 * 24 * 3600  # long expired, within the 30-day stale window
        verdicts = await run(RobotsCache(wall=wall, backing=backing, ttl=600.0), urls)
    # Without the stored copy a 500 on robots.txt disallows everything for a while.
    assert verdicts == [None, "robots"]
    assert srv.hits["/public"] == 2
    assert backing.copies == {good.origin: good}


async def test_passing_states_are_not_saved() -> None:
    backing = MemoryBacking()
    async with serve(server({"status": 503})) as srv:  # type: ignore[arg-type]
        verdicts = await run(RobotsCache(backing=backing), [srv.url("/public")])
    assert verdicts == ["robots_unreachable"]  # 5xx, no copy: disallow briefly
    assert backing.copies == {}


async def test_a_4xx_is_kept_as_allow_all() -> None:
    backing = MemoryBacking()
    wall = Clock(1_800_000_000.0)
    async with serve(server({"status": 404})) as srv:  # type: ignore[arg-type]
        await run(RobotsCache(wall=wall, backing=backing), [srv.url("/private/x")])
        again = await run(RobotsCache(wall=wall, backing=backing), [srv.url("/private/x")])
    assert again == [None]
    assert srv.hits["/robots.txt"] == 1
    (copy,) = backing.copies.values()
    assert (copy.state, copy.status, copy.body) == ("allow_all", 404, None)


async def test_a_failing_backing_costs_a_request_not_the_fetch() -> None:
    backing = MemoryBacking()
    backing.fail = True
    async with serve(server({"status": 200})) as srv:  # type: ignore[arg-type]
        verdicts = await run(RobotsCache(backing=backing), [srv.url("/public")])
    assert verdicts == [None]
    assert backing.loads == [RobotsCache.origin(srv.url("/public"))]
    assert srv.hits["/robots.txt"] == 1
