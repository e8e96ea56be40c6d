"""`takt master`: the embedded ROS 1 master (tools/takt-master), so a robot needs no roscore."""

from __future__ import annotations

import argparse

from takt import native
from takt.commands.system import supervise


def add_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    p = sub.add_parser("master", help="a ROS 1 master (master API and parameter server) until stopped (Ctrl-C)")
    p.add_argument("--port", type=int, default=11311, help="TCP port (default 11311)")
    p.add_argument("--host", default="127.0.0.1", help="address to serve on (default 127.0.0.1)")
    p.add_argument("--param-bytes", metavar="N", help="room for the parameters' values, XML-RPC encoded "
                   "(default 2M; e.g. 16M)")
    p.add_argument("--max-request", metavar="N", help="the largest request or answer (e.g. a large "
                   "robot_description; default 2M)")


def run(args: argparse.Namespace) -> int:
    prog = native.program("tools/takt-master")
    cmd = [str(prog), "--port", str(args.port), "--host", args.host]
    if args.param_bytes is not None:
        cmd += ["--param-bytes", args.param_bytes]  # takt-master checks the size and says why not
    if args.max_request is not None:
        cmd += ["--max-request", args.max_request]
    return supervise(cmd)
