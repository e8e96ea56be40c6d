"""`takt sizes`: memory per entity (the native takt-sizes program)."""

from __future__ import annotations

import argparse
import subprocess

from takt import native


def run(args: argparse.Namespace) -> int:
    exe = native.program("tools/takt-sizes")
    return subprocess.call([str(exe)] + (["-j"] if args.json else []))
