"""``notify subscribe`` refuses a digest option that the chosen mode would ignore.

``--hour`` and ``--weekday`` had defaults (8, mon), so the command could not tell them given from
not given: ``notify subscribe r@x FEED --hour 7`` made a realtime subscription and dropped the
hour without a word, and a daily reader re-running it with ``--hour 9`` to move the digest was
switched to realtime ("settings updated"). As ``crawl --max`` without ``--once``, an option the
command would ignore is refused, naming it, and nothing changes.
"""

from __future__ import annotations

import pytest

from fairfetch.notify.sink import MailSink
from fairfetch.testing import Testbed

from .conftest import Cli, assert_clean_error
from .test_contract_notify import ncli, sink  # noqa: F401  (fixtures)


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["--hour", "7"], "--hour"),  # the mode's default is realtime
        (["--mode", "realtime", "--hour", "7"], "--hour"),
        (["--weekday", "fri"], "--weekday"),
        (["--mode", "daily", "--weekday", "fri"], "--weekday"),
        (["--mode", "realtime", "--weekday", "0"], "--weekday"),
    ],
)
def test_walkthrough_subscribe_refuses_a_digest_option_its_mode_ignores(
    ncli: Cli, tb: Testbed, sink: MailSink, args: list[str], named: str  # noqa: F811
) -> None:
    [spec] = tb.catalog(n=1, behaviours=["podcast"])
    ncli.ok("notify", "subscribe", "keep@example.test", spec.url, "--mode", "daily", "--hour", "6")
    before = ncli.json("notify", "list", "--json")
    mails = len(sink.mails)
    r = ncli("notify", "subscribe", "keep@example.test", spec.url, *args)
    assert_clean_error(r, named)
    # the daily subscription is neither switched to realtime nor moved
    assert ncli.json("notify", "list", "--json") == before
    assert before[0]["mode"] == "daily"
    assert before[0]["hour"] == 6
    assert len(sink.mails) == mails


def test_walkthrough_subscribe_digest_options_still_work_with_their_mode(
    ncli: Cli, tb: Testbed, sink: MailSink  # noqa: F811
) -> None:
    [spec] = tb.catalog(n=1, behaviours=["podcast"])
    ncli.ok("notify", "subscribe", "r@example.test", spec.url)  # realtime, no digest options
    ncli.ok("notify", "subscribe", "d@example.test", spec.url, "--mode", "daily")
    ncli.ok("notify", "subscribe", "w@example.test", spec.url, "--mode", "weekly",
            "--weekday", "fri", "--hour", "18")  # fmt: skip
    ncli.ok("notify", "subscribe", "v@example.test", spec.url, "--mode", "weekly")
    subs = {s["email"]: s for s in ncli.json("notify", "list", "--json")}
    assert (subs["r@example.test"]["mode"], subs["r@example.test"]["hour"]) == ("realtime", None)
    # the documented defaults: 08:00, Monday
    assert (subs["d@example.test"]["mode"], subs["d@example.test"]["hour"]) == ("daily", 8)
    assert (subs["w@example.test"]["hour"], subs["w@example.test"]["weekday"]) == (18, 4)
    assert (subs["v@example.test"]["hour"], subs["v@example.test"]["weekday"]) == (8, 0)
