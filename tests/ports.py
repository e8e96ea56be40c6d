"""A free loopback TCP port for a ROS master a test script starts (tests/dds/run_ros1_ros2.py,
tests/roscpp/test_roscpp_examples.py; the C++ tests' twin is ros1_test::free_port)."""

from __future__ import annotations

import os
import random
import socket
import time


def free_port() -> int:
    """A loopback TCP port free now, below the kernel's ephemeral range: an ephemeral port (a bind
    to 0) may be taken by an outgoing connection of a test running beside this one before the
    master binds it, and rosmaster then waits for ever, saying the port is in use."""
    rng = random.Random(os.getpid() ^ time.monotonic_ns())
    for _ in range(1000):
        port = rng.randrange(20000, 32000)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free TCP port in 20000-32000")
