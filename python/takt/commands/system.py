"""`takt run`, `takt agent` and `takt check`: a system description under the native runner."""

from __future__ import annotations

import argparse
import signal
import subprocess
import sys
from pathlib import Path
from typing import List, Optional, Tuple

from takt import native


def run_system(file: Path, executor: Optional[str], duration: Optional[float], out: Path,
               rt_priority: int = 80, cpu: int = -1, quiet: bool = False,
               links: Optional[List[str]] = None,
               trace: Optional[Path] = None) -> Tuple[int, Optional[Path]]:
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
    if trace is not None:
        cmd += ["--trace", str(trace)]
    child = subprocess.Popen(cmd)
    try:
        rc = child.wait()
    except KeyboardInterrupt:  # Ctrl-C (or SIGINT to this process): let the run stop in order
        child.send_signal(signal.SIGINT)
        rc = child.wait()
    return rc, (json_path if rc == 0 and json_path.exists() else None)


def run(args: argparse.Namespace) -> int:
    """`takt run FILE ...`: run with a live table, print where the result went."""
    if not args.file.is_file():
        print(f"takt run: {args.file}: no such file", file=sys.stderr)
        return 2
    rc, path = run_system(args.file, args.executor, args.duration, args.out, args.rt_priority, args.cpu, args.quiet,
                          trace=args.trace)
    if path is not None:
        print(f"result: {path}")
    return rc


def agent(args: argparse.Namespace) -> int:
    """`takt agent FILE ...`: serve the file's links until stopped."""
    if not args.file.is_file():
        print(f"takt agent: {args.file}: no such file", file=sys.stderr)
        return 2
    rc, path = run_system(args.file, None, args.duration, args.out, args.rt_priority, -1, True, args.link,
                          trace=getattr(args, "trace", None))
    if path is not None:
        print(f"result: {path}")
    return rc


def check(args: argparse.Namespace) -> int:
    """`takt check FILE`: validate without running."""
    return subprocess.call([str(native.program("tools/takt-run")), str(args.file), "--check"])
