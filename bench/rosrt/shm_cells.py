#!/usr/bin/env python3
"""Measurement aid: the rosrt overhead cells of one transport, interleaved, several repetitions.

  bench/rosrt/shm_cells.py --exe NAME=PATH [--exe NAME2=PATH2 ...] [--reps 3] [--count 1500]
                           [--transport shm] [--execs preempt,waitset]

Runs `PATH overhead EXEC SCENARIO COUNT 2000 TRANSPORT` (PATH: a takt-bench-rosrt; several
builds compare in the same minutes) for every scenario and executor, REPS times interleaved
(program, scenario, executor innermost), and prints p50 / p99 per run, the p99 ratio preempt /
waitset per repetition, and per program the same over the pooled samples (as `takt bench rosrt`
pools its blocks).
"""
import argparse
import json
import subprocess

SCENARIOS = ["single", "dummy100", "fanout10"]


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * (len(xs) - 1) + 0.5))] / 1e3 if xs else float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--exe", action="append", required=True)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--count", default="1500")
    ap.add_argument("--transport", default="shm")
    ap.add_argument("--execs", default="preempt,waitset")
    a = ap.parse_args()
    exes = [e.split("=", 1) for e in a.exe]
    execs = a.execs.split(",")
    pooled = {}
    for rep in range(a.reps):
        for scen in SCENARIOS:
            for name, path in exes:
                p99 = {}
                for ex in execs:
                    out = subprocess.run([path, "overhead", ex, scen, a.count, "2000", a.transport],
                                         check=True, capture_output=True, text=True).stdout
                    r = json.loads(out)
                    s = r["samples_ns"]
                    pooled.setdefault((name, scen, ex), []).extend(s)
                    p99[ex] = pct(s, 0.99)
                    print(f"rep {rep} {name:8s} {a.transport} {scen:9s} {ex:8s} n={len(s):5d}/{r['expected']} "
                          f"p50 {pct(s, 0.5):7.1f} p99 {p99[ex]:7.1f} max {pct(s, 1.0):8.1f}", flush=True)
                if "preempt" in p99 and "waitset" in p99:
                    print(f"rep {rep} {name:8s} {a.transport} {scen:9s} p99 preempt/waitset "
                          f"{p99['preempt'] / p99['waitset']:.2f}", flush=True)
    for name, _ in exes:
        for scen in SCENARIOS:
            line = f"pooled {name:8s} {a.transport} {scen:9s}"
            for ex in execs:
                s = pooled[(name, scen, ex)]
                line += f" {ex} p50 {pct(s, 0.5):.1f} p99 {pct(s, 0.99):.1f};"
            if "preempt" in execs and "waitset" in execs:
                r = pct(pooled[(name, scen, "preempt")], 0.99) / pct(pooled[(name, scen, "waitset")], 0.99)
                line += f" ratio {r:.2f}"
            print(line)


if __name__ == "__main__":
    main()
