"""The `takt` command: parses the arguments and hands them to the subcommand's module
(takt.commands.*; benchmarks in takt.bench)."""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path
from typing import Callable, Dict, List, Optional

from takt import native
from takt.bench import registry
from takt.commands import bench, demo, graph, master, mcu, plot, record, sizes, system

COMMANDS: Dict[str, Callable[[argparse.Namespace], int]] = {
    "mcu": mcu.run, "run": system.run, "agent": system.agent, "check": system.check, "sizes": sizes.run, "demo": demo.main,
    "bench": bench.run, "node": graph.run, "topic": graph.run, "service": graph.run, "chain": graph.run,
    "plot": plot.run, "record": record.run, "play": record.run, "master": master.run,
}


def _version() -> str:
    try:
        from importlib.metadata import version
        return version("takt")
    except Exception:  # run from a source tree without the package installed
        return "(source tree)"


def _run_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", type=Path, help="system description (YAML)")
    p.add_argument("--executor", choices=["tide", "batch", "preempt", "waitset"], help="override the file's executor")
    p.add_argument("--duration", type=float, help="seconds to run (default: the file's duration_s)")
    p.add_argument("--out", type=Path, default=Path("results"), help="directory for the JSON result")
    p.add_argument("--rt-priority", type=int, default=80,
                   help="SCHED_FIFO priority of the executor thread, 0 for SCHED_OTHER (default 80)")
    p.add_argument("--cpu", type=int, default=-1, help="pin the executor thread to this CPU")
    p.add_argument("--quiet", action="store_true", help="no live table")
    p.add_argument("--trace", type=Path, help="record a scheduling trace into this file (Perfetto; "
                   "open it at https://ui.perfetto.dev)")
    p.add_argument("--shared-domain", help="shared-memory domain of the file's shared topics "
                   "(default: the file's shared_domain)")
    p.add_argument("--link", action="append", default=[], metavar="NAME=SPEC",
                   help="replace a link's spec (udp:..., serial:PATH:BAUD, pty)")
    p.add_argument("--peer-clock", action="append", default=[], metavar="NAME",
                   help="map the origin times of link NAME's far clock (a microcontroller's)")
    p.add_argument("--no-introspect", action="store_true",
                   help="no endpoint for the `takt node|topic|service|chain` tools")


def parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand except msggen (which parses its own)."""
    p = argparse.ArgumentParser(prog="takt", description="takt real-time robotics middleware")
    p.add_argument("--version", action="version", version=f"takt {_version()}")
    sub = p.add_subparsers(dest="command", required=True)

    p_run = sub.add_parser("run", help="run a system description and show per-chain latency live")
    _run_args(p_run)

    p_agent = sub.add_parser("agent", help="serve links as a host agent: run FILE until stopped (Ctrl-C)")
    p_agent.add_argument("file", type=Path, help="system description with its links and the callbacks it hosts")
    p_agent.add_argument("--link", action="append", default=[], metavar="NAME=SPEC",
                         help="replace a link's spec (udp:..., serial:PATH:BAUD, pty)")
    p_agent.add_argument("--peer-clock", action="append", default=[], metavar="NAME",
                         help="map the origin times of link NAME's far clock (a microcontroller's; "
                         "unless the file says peer_clock: false)")
    p_agent.add_argument("--duration", type=float, default=86400.0, help="seconds (default: a day)")
    p_agent.add_argument("--out", type=Path, default=Path("results"))
    p_agent.add_argument("--rt-priority", type=int, default=70)
    p_agent.add_argument("--trace", type=Path, help="record a scheduling trace into this file (Perfetto)")

    p_check = sub.add_parser("check", help="validate a system description without running it")
    p_check.add_argument("file", type=Path)

    p_demo = sub.add_parser("demo", help="the robot demo: batch (rclc) vs tide, side by side")
    p_demo.add_argument("--duration", type=float, default=8.0, help="seconds per executor (default 8)")
    p_demo.add_argument("--out", type=Path, default=Path("results"))

    sub.add_parser("msggen", help="generate C/C++ message types from ROS .msg/.srv files (see --help)")

    p_sizes = sub.add_parser("sizes", help="memory per entity, beside µRT's Table 2 "
                             "(--mcu: flash and RAM per subsystem on a Cortex-M4, beside µRT's Table 3)")
    p_sizes.add_argument("--json", action="store_true")
    p_sizes.add_argument("--mcu", action="store_true",
                         help="cross-compile each configuration with arm-none-eabi-gcc and measure it")

    graph.add_parsers(sub)
    mcu.add_parser(sub)
    master.add_parser(sub)
    plot.add_parser(sub)
    record.add_parsers(sub)

    p_bench = sub.add_parser("bench", help="run a benchmark: " + ", ".join(registry.NAMES))
    p_bench.add_argument("name", help="benchmark name")
    p_bench.add_argument("--quick", action="store_true", help="short smoke mode (CI)")
    p_bench.add_argument("--mcu", action="store_true",
                         help="pods: the microcontroller side in QEMU (mps2-an500), 115200 baud paced")
    p_bench.add_argument("--out", type=Path, default=Path("results"), help="output directory")
    return p


def main(argv: Optional[List[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    # Started with SIGINT ignored (a background job of a non-interactive shell, some supervisors),
    # Python installs no KeyboardInterrupt handler: take SIGINT back so that it stops every command
    # (`takt run` and `takt agent` forward it to the runner: takt.commands.system.supervise).
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if argv[:1] == ["msggen"]:  # its own option parser (see takt/msggen/generate.py)
        from takt.msggen.generate import main as msggen_main
        return msggen_main(argv[1:])
    args = parser().parse_args(argv)
    command = COMMANDS.get(args.command)
    if command is None:
        return 2
    try:
        return command(args)
    except native.NativeMissing as e:
        print(f"takt: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 128 + signal.SIGINT
    except OSError as e:  # a file or program a command could not open, make or start: one line
        print(f"takt {args.command}: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
