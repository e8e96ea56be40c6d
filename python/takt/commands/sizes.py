"""`takt sizes`: memory per entity (the native takt-sizes program); with --mcu the footprint on
a Cortex-M4 in µRT's Table 3 layout (takt/mcu_sizes.py)."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

from takt import mcu_sizes, native


def run(args: argparse.Namespace) -> int:
    if getattr(args, "mcu", False):
        try:
            table = mcu_sizes.measure(jobs=mcu_sizes.jobs_default())
        except mcu_sizes.ToolchainMissing as e:
            print(f"takt sizes: {e}", file=sys.stderr)
            return 1
        except RuntimeError as e:
            print(f"takt sizes: compile failed: {e}", file=sys.stderr)
            return 1
        print(json.dumps(table, indent=1) if args.json else mcu_sizes.format_table(table))
        return 0
    exe = native.program("tools/takt-sizes")
    return subprocess.call([str(exe)] + (["-j"] if args.json else []))
