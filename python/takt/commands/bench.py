"""`takt bench NAME`: look the benchmark up in the registry and run it."""

from __future__ import annotations

import argparse
import subprocess
import sys

from takt.bench import registry


def run(args: argparse.Namespace) -> int:
    if args.name not in registry.NAMES:
        print(f"takt bench: unknown benchmark '{args.name}' (known: {', '.join(registry.NAMES)})", file=sys.stderr)
        return 2
    try:
        return registry.run(args.name, args.quick, args.out, getattr(args, "mcu", False))
    except ValueError as e:
        print(f"takt bench: {e}", file=sys.stderr)
        return 2
    except (RuntimeError, subprocess.TimeoutExpired) as e:  # BenchFailed: a program of the run failed
        if isinstance(e, (NotImplementedError, RecursionError)):
            raise  # a bug of the benchmark, not a failed run: its traceback
        print(f"takt bench {args.name}: {e}", file=sys.stderr)
        return 1
