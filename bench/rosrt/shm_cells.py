#!/usr/bin/env python3
"""Measurement aid: the rosrt overhead cells of one transport, interleaved, several repetitions.

  bench/rosrt/shm_cells.py BUILD_DIR [REPS] [COUNT] [TRANSPORT] [EXEC...]

Runs `takt-bench-rosrt overhead EXEC SCENARIO COUNT 2000 TRANSPORT` for every scenario and
executor (preempt and waitset by default), REPS times interleaved, and prints p50 / p99 per run
and the p99 ratio preempt / waitset per scenario and repetition (same method as `takt bench
rosrt`, which takes the p99 over the pooled samples of its blocks).
"""
import json
import subprocess
import sys


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * (len(xs) - 1) + 0.5))] / 1e3 if xs else float("nan")


def main():
    build = sys.argv[1]
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    count = sys.argv[3] if len(sys.argv) > 3 else "1500"
    tr = sys.argv[4] if len(sys.argv) > 4 else "shm"
    execs = sys.argv[5:] or ["preempt", "waitset"]
    exe = f"{build}/bench/takt-bench-rosrt"
    pooled = {}
    for rep in range(reps):
        for scen in ["single", "dummy100", "fanout10"]:
            p99 = {}
            for ex in execs:
                out = subprocess.run([exe, "overhead", ex, scen, count, "2000", tr], check=True,
                                     capture_output=True, text=True).stdout
                r = json.loads(out)
                s = r["samples_ns"]
                pooled.setdefault((scen, ex), []).extend(s)
                p99[ex] = pct(s, 0.99)
                print(f"rep {rep} {tr} {scen:9s} {ex:8s} n={len(s):5d}/{r['expected']} "
                      f"p50 {pct(s, 0.5):7.1f} p99 {p99[ex]:7.1f} max {pct(s, 1.0):8.1f}", flush=True)
            if "preempt" in p99 and "waitset" in p99:
                print(f"rep {rep} {tr} {scen:9s} p99 preempt/waitset {p99['preempt'] / p99['waitset']:.2f}",
                      flush=True)
    for scen in ["single", "dummy100", "fanout10"]:
        line = f"pooled {tr} {scen:9s}"
        for ex in execs:
            s = pooled[(scen, ex)]
            line += f" {ex} p50 {pct(s, 0.5):.1f} p99 {pct(s, 0.99):.1f};"
        if "preempt" in execs and "waitset" in execs:
            line += f" ratio {pct(pooled[(scen, 'preempt')], 0.99) / pct(pooled[(scen, 'waitset')], 0.99):.2f}"
        print(line)


if __name__ == "__main__":
    main()
