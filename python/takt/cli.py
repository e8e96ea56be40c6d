"""The `takt` command: run, check, demo, bench."""

from __future__ import annotations

import argparse
import signal
import subprocess
import sys
from pathlib import Path
from typing import List, Optional

from takt import bench, native, demo


def _run_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", type=Path, help="system description (YAML)")
    p.add_argument("--executor", choices=["tide", "batch", "preempt", "waitset"], help="override the file's executor")
    p.add_argument("--duration", type=float, help="seconds to run (default: the file's duration_s)")
    p.add_argument("--out", type=Path, default=Path("results"), help="directory for the JSON result")
    p.add_argument("--rt-priority", type=int, default=80,
                   help="SCHED_FIFO priority of the executor thread, 0 for SCHED_OTHER (default 80)")
    p.add_argument("--cpu", type=int, default=-1, help="pin the executor thread to this CPU")
    p.add_argument("--quiet", action="store_true", help="no live table")


def run_system(file: Path, executor: Optional[str], duration: Optional[float], out: Path,
               rt_priority: int = 80, cpu: int = -1, quiet: bool = False,
               links: Optional[List[str]] = None) -> tuple[int, Optional[Path]]:
    """Run takt-run on file; return (exit status, path of the JSON result or None)."""
    exe = native.program("tools/takt-run")
    out.mkdir(parents=True, exist_ok=True)
    json_path = out / f"run_{file.stem}_{executor or 'file'}.json"
    cmd: List[str] = [str(exe), str(file), "--json", str(json_path),
                      "--rt-priority", str(rt_priority), "--cpu", str(cpu)]
    if executor:
        cmd += ["--executor", executor]
    if duration is not None:
        cmd += ["--duration", str(duration)]
    if quiet:
        cmd.append("--quiet")
    for link in links or []:
        cmd += ["--link", link]
    child = subprocess.Popen(cmd)
    try:
        rc = child.wait()
    except KeyboardInterrupt:  # Ctrl-C (or SIGINT to this process): let the run stop in order
        child.send_signal(signal.SIGINT)
        rc = child.wait()
    return rc, (json_path if rc == 0 and json_path.exists() else None)


def main(argv: Optional[List[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["msggen"]:  # its own option parser (see takt/msggen/generate.py)
        from takt.msggen.generate import main as msggen_main
        return msggen_main(argv[1:])
    parser = argparse.ArgumentParser(prog="takt", description="takt real-time robotics middleware")
    sub = parser.add_subparsers(dest="command", required=True)

    p_run = sub.add_parser("run", help="run a system description and show per-chain latency live")
    _run_args(p_run)

    p_agent = sub.add_parser("agent", help="serve links as a host agent: run FILE until stopped (Ctrl-C)")
    p_agent.add_argument("file", type=Path, help="system description with its links and the callbacks it hosts")
    p_agent.add_argument("--link", action="append", default=[], metavar="NAME=SPEC",
                         help="replace a link's spec (udp:..., serial:PATH:BAUD, pty)")
    p_agent.add_argument("--duration", type=float, default=86400.0, help="seconds (default: a day)")
    p_agent.add_argument("--out", type=Path, default=Path("results"))
    p_agent.add_argument("--rt-priority", type=int, default=70)

    p_check = sub.add_parser("check", help="validate a system description without running it")
    p_check.add_argument("file", type=Path)

    p_demo = sub.add_parser("demo", help="the robot demo: batch (rclc) vs tide, side by side")
    p_demo.add_argument("--duration", type=float, default=8.0, help="seconds per executor (default 8)")
    p_demo.add_argument("--out", type=Path, default=Path("results"))

    sub.add_parser("msggen", help="generate C/C++ message types from ROS .msg/.srv files (see --help)")

    p_sizes = sub.add_parser("sizes", help="memory per entity, beside µRT's Table 2")
    p_sizes.add_argument("--json", action="store_true")

    p_bench = sub.add_parser("bench", help="run a benchmark: " + ", ".join(bench.NAMES))
    p_bench.add_argument("name", help="benchmark name")
    p_bench.add_argument("--quick", action="store_true", help="short smoke mode (CI)")
    p_bench.add_argument("--out", type=Path, default=Path("results"), help="output directory")

    args = parser.parse_args(argv)
    try:
        if args.command == "run":
            if not args.file.is_file():
                print(f"takt run: {args.file}: no such file", file=sys.stderr)
                return 2
            rc, path = run_system(args.file, args.executor, args.duration, args.out,
                                  args.rt_priority, args.cpu, args.quiet)
            if path is not None:
                print(f"result: {path}")
            return rc
        if args.command == "agent":
            if not args.file.is_file():
                print(f"takt agent: {args.file}: no such file", file=sys.stderr)
                return 2
            rc, path = run_system(args.file, None, args.duration, args.out, args.rt_priority, -1, True,
                                  args.link)
            if path is not None:
                print(f"result: {path}")
            return rc
        if args.command == "check":
            return subprocess.call([str(native.program("tools/takt-run")), str(args.file), "--check"])
        if args.command == "sizes":
            exe = native.program("tools/takt-sizes")
            return subprocess.call([str(exe)] + (["-j"] if args.json else []))
        if args.command == "demo":
            return demo.run(args.duration, args.out)
        if args.command == "bench":
            if args.name not in bench.NAMES:
                print(f"takt bench: unknown benchmark '{args.name}' (known: {', '.join(bench.NAMES)})",
                      file=sys.stderr)
                return 2
            return bench.run(args.name, args.quick, args.out)
    except native.NativeMissing as e:
        print(f"takt: {e}", file=sys.stderr)
        return 2
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
