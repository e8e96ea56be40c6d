"""`takt demo` (`make run`): the robot example under the rclc-like `batch` executor and under `tide`, one after
the other on the same machine, then the highest-priority chain's latency side by side."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Dict, List

from takt import native
from takt.commands.system import run_system


def _ms(ns: float) -> str:
    return f"{ns / 1e6:.2f}"


def run(duration: float, out: Path) -> int:
    example = native.data_dir() / "examples" / "robot.yaml"
    results: Dict[str, dict] = {}
    stopped: List[int] = []
    for executor in ("batch", "tide"):
        print(f"\n=== {example.name} under `{executor}` for {duration:g} s ===", flush=True)
        rc, path = run_system(example, executor, duration, out, stopped=stopped)
        if stopped:  # Ctrl-C or SIGTERM: the run stopped in order; no further run, no comparison
            print(f"takt demo: stopped{f', result: {path}' if path else ''}")
            return rc
        if rc != 0 or path is None:
            print(f"takt demo: the {executor} run failed (exit {rc})")
            return rc or 1
        results[executor] = json.loads(path.read_text())

    print("\n=== summary: every chain, batch (rclc semantics) vs tide (PoDS) ===")
    sched = "SCHED_FIFO 80" if results["tide"]["sched_fifo"] else "SCHED_OTHER (no SCHED_FIFO permission)"
    print(f"same system, same machine, {duration:g} s each, executor thread {sched}; latency in ms\n")
    header = f"{'chain':<10} {'deadline':>8} | {'batch p50':>9} {'p99':>7} {'max':>7} {'miss':>5} | " \
             f"{'tide p50':>9} {'p99':>7} {'max':>7} {'miss':>5} | {'p99 ratio':>9}"
    print(header)
    print("-" * len(header))
    for b, t in zip(results["batch"]["chains"], results["tide"]["chains"]):
        ratio = b["p99_ns"] / t["p99_ns"] if t["p99_ns"] else float("nan")
        print(f"{b['name']:<10} {_ms(b['deadline_ns']):>8} | {_ms(b['p50_ns']):>9} {_ms(b['p99_ns']):>7} "
              f"{_ms(b['max_ns']):>7} {b['deadline_misses']:>5} | {_ms(t['p50_ns']):>9} "
              f"{_ms(t['p99_ns']):>7} {_ms(t['max_ns']):>7} {t['deadline_misses']:>5} | {ratio:>8.1f}x")
    print("\nTiming validation at the actuators (violations detected while running):")
    print(f"{'consumer':<10} {'class':<5} | {'batch viol.':>11} {'useful':>7} | {'tide viol.':>10} {'useful':>7}")
    for cb_b, cb_t in zip(results["batch"]["callbacks"], results["tide"]["callbacks"]):
        if "class" not in cb_b:
            continue
        vb = sum(cb_b["violations"].values())
        vt = sum(cb_t["violations"].values())
        print(f"{cb_b['name']:<10} {cb_b['class']:<5} | {vb:>11} {cb_b['usefulness_mean']:>7.2f} | "
              f"{vt:>10} {cb_t['usefulness_mean']:>7.2f}")
    top_b, top_t = results["batch"]["chains"][0], results["tide"]["chains"][0]
    print(f"\nThe highest-priority chain '{top_t['name']}': p99 {_ms(top_b['p99_ns'])} ms under batch, "
          f"{_ms(top_t['p99_ns'])} ms under tide; deadline misses {top_b['deadline_misses']} -> "
          f"{top_t['deadline_misses']} of {top_t['count']} periods.")
    print("Under batch its later stages wait behind every lower-priority timer callback of the round; "
          "tide runs one callback per round, highest priority first.")
    print(f"JSON results: {out}/")
    return 0


def main(args: argparse.Namespace) -> int:
    """`takt demo`: the parsed arguments' duration and output directory."""
    return run(args.duration, args.out)
