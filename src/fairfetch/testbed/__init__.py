"""The simulated web: thousands of deterministic virtual hosts on one loopback port.

Start one with :func:`fairfetch.testing.running_testbed` (tests, in the current loop),
:func:`fairfetch.testing.testbed_thread` (sync and subprocess tests) or ``fairfetch testbed``.
Other parts plug host families in with :func:`fairfetch.testbed.registry.register`.
See docs/testbed.md.
"""

from fairfetch.testbed.catalog import FeedSpec
from fairfetch.testbed.clock import TestbedClock
from fairfetch.testbed.options import TestbedOptions
from fairfetch.testbed.server import CONTEXT, CONTROL_HOST, Gate, Testbed

__all__ = ["CONTEXT", "CONTROL_HOST", "FeedSpec", "Gate", "Testbed", "TestbedClock",
           "TestbedOptions"]
