#!/usr/bin/env python3
"""The robot demo split into three processes over shared memory (examples/robot_split/run.sh),
run briefly: every chain of the perception and control processes, whose latency runs from a
sensor sample taken in another process, must have completed, and no process may fail."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path


def main() -> int:
    takt_run, script = sys.argv[1], sys.argv[2]
    domain = f"split{os.getpid()}"
    with tempfile.TemporaryDirectory() as out:
        env = dict(os.environ, TAKT_RUN=takt_run, TAKT_SPLIT_OUT=out)
        proc = subprocess.run([script, "2", "--shared-domain", domain, "--rt-priority", "0"],
                              env=env, capture_output=True, text=True, timeout=60)
        print(proc.stdout)
        print(proc.stderr, file=sys.stderr)
        try:
            os.unlink(f"/dev/shm/takt.{domain}")
        except FileNotFoundError:
            pass
        if proc.returncode != 0:
            print(f"run.sh exited with {proc.returncode}")
            return 1
        results = {p: json.loads((Path(out) / f"{p}.json").read_text())
                   for p in ("sensors", "perception", "control")}
    failures = []
    for name, r in results.items():
        if r.get("publish_errors", 0) != 0:
            failures.append(f"{name}: {r['publish_errors']} publish errors")
    sense = {c["name"]: c["count"] for c in results["perception"]["chains"]}
    act = {c["name"]: c["count"] for c in results["control"]["chains"]}
    for chain, pre in (("safety", "safety_sense"), ("obstacle", "obstacle_sense"),
                       ("tracking", "tracking_sense")):
        # 20 Hz for 2 s: 40 samples, less the start-up skew between the processes
        if act.get(chain, 0) < 10:
            failures.append(f"control chain {chain}: {act.get(chain, 0)} completions, expected >= 10")
        if sense.get(pre, 0) < act.get(chain, 0):
            failures.append(f"perception chain {pre} completed {sense.get(pre, 0)} times, fewer "
                            f"than control's {chain} ({act.get(chain, 0)})")
    for f in failures:
        print(f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
