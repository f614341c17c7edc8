"""``feeds add`` says when the feed's first crawl failed.

Adding a feed is its first crawl (one GET), yet a URL answering 404, or 410, printed the same
``added URL`` as a healthy feed, exit 0: a newcomer with a mistyped URL learnt nothing until a
``feeds show``. A failure must be loud: the feed is still added (failed feeds are data, not an
exit code, and the crawler keeps trying it), and stderr says its first crawl failed and why.
"""

from __future__ import annotations

from fairfetch.testing import Testbed

from .conftest import Cli


def test_walkthrough_feeds_add_names_a_failed_first_crawl(cli: Cli, tb: Testbed) -> None:
    [blog] = tb.catalog(n=1, behaviours=["blog"])
    [missing] = tb.catalog(n=1, behaviours=["status-404"])
    [gone] = tb.catalog(n=1, behaviours=["status-410"])
    r = cli("feeds", "add", blog.url, missing.url, gone.url)
    assert r.exit_code == 0, (r.output, r.exception)
    # stdout: one "added URL" line a feed, as scripts read it
    assert sorted(r.stdout.splitlines()) == sorted(
        f"added {u}" for u in (blog.url, missing.url, gone.url)
    )
    errors = r.stderr.splitlines()
    [on_missing] = [line for line in errors if missing.url in line]
    assert "first crawl failed" in on_missing
    assert "404" in on_missing
    assert "status error" in on_missing
    [on_gone] = [line for line in errors if gone.url in line]
    assert "first crawl failed" in on_gone
    assert "gone" in on_gone
    assert "status dead" in on_gone
    assert not any(blog.url in line for line in errors), r.stderr
    # added all the same, with the failure on record
    shown = {u: cli.json("feeds", "show", u, "--json")["status"] for u in (missing.url, gone.url)}
    assert shown == {missing.url: "error", gone.url: "dead"}


def test_walkthrough_feeds_add_of_a_healthy_feed_says_nothing_more(cli: Cli, tb: Testbed) -> None:
    [blog] = tb.catalog(n=1, behaviours=["podcast"])
    r = cli.ok("feeds", "add", blog.url)
    assert r.stdout.splitlines() == [f"added {blog.url}"]
    assert r.stderr == ""
    again = cli.ok("feeds", "add", blog.url)
    assert again.stdout.splitlines() == [f"exists {blog.url}"]
    assert again.stderr == ""
