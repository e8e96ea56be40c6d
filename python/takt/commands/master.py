"""`takt master`: the embedded ROS 1 master (tools/takt-master), so a robot needs no roscore."""

from __future__ import annotations

import argparse

from takt import native
from takt.commands.system import supervise


def add_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    p = sub.add_parser("master", help="a ROS 1 master (master API and parameter server) until stopped (Ctrl-C)")
    p.add_argument("--port", type=int, default=11311, help="TCP port (default 11311)")
    p.add_argument("--host", default="127.0.0.1", help="address to serve on (default 127.0.0.1)")


def run(args: argparse.Namespace) -> int:
    prog = native.program("tools/takt-master")
    return supervise([str(prog), "--port", str(args.port), "--host", args.host])
