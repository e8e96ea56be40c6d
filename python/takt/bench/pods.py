"""`takt bench pods`: PoDS's experiments (chains, payload, work, reliable delivery over a lossy
115200-baud line) on takt beside the micro-ROS baseline (rclc executors, blocking transport)."""

from __future__ import annotations

from pathlib import Path
from typing import Dict

from takt import native
from takt.bench.common import command, machine, run_native, write_json, write_markdown

NAME = "pods"


def run(quick: bool, out: Path) -> int:
    exe = native.program("bench/takt-bench-pods")
    samples = 2 if quick else 20
    # (sweep, x, chains, payload, work_ms, reliable, success_pct) as in PoDS §6.2, period 500 ms
    points = []
    for n in ([1, 3] if quick else [1, 2, 3, 4, 5]):
        points.append(("chains", n, n, 100, 10, 0, 100))
    for b in ([100, 500] if quick else [100, 200, 300, 400, 500]):
        points.append(("payload", b, 3, b, 5, 0, 100))
    for w in ([10, 50] if quick else [10, 20, 30, 40, 50]):
        points.append(("work", w, 3, 100, w, 0, 100))
    for sp in ([0, 100] if quick else [0, 20, 40, 60, 80, 100]):
        points.append(("reliable", sp, 3, 100, 10, 1, sp))
    rows = []
    for i, (sweep, x, chains, payload, work, rel, sp) in enumerate(points):
        for variant in ("takt", "baseline"):  # interleaved, point by point
            r = run_native(exe, [variant, str(chains), str(payload), str(work), "500", str(samples),
                                 str(rel), str(sp), str(1000 + i)])
            r.update({"sweep": sweep, "x": x})
            rows.append(r)

    def get(sweep, x, variant):
        return next(r for r in rows if r["sweep"] == sweep and r["x"] == x and r["variant"] == variant)

    ms = lambda ns: round(ns / 1e6, 2)
    headline: Dict[str, object] = {
        "takt_over_baseline_max_at_3_chains": round(get("chains", 3, "takt")["max_ns"] / get("chains", 3, "baseline")["max_ns"], 3),
        "takt_max_ms_at_3_chains": ms(get("chains", 3, "takt")["max_ns"]),
        "baseline_max_ms_at_3_chains": ms(get("chains", 3, "baseline")["max_ns"]),
    }
    hi = 5 if not quick else 3
    for v in ("takt", "baseline"):
        headline[f"{v}_max_ms_{hi}_chains_minus_1_chain"] = ms(get("chains", hi, v)["max_ns"] - get("chains", 1, v)["max_ns"])
    for sp in ([0, 100] if quick else [0, 20, 40, 60, 80, 100]):
        for v in ("takt", "baseline"):
            headline[f"{v}_reliable_{sp}pct_mean_ms"] = ms(get("reliable", sp, v)["mean_ns"])
    m = machine()
    result = {"benchmark": NAME, "command": command(NAME, quick), "machine": m,
              "quick": quick, "samples_per_point": samples, "headline": headline, "rows": rows}
    write_json(out, NAME, result)
    md = ["# pods: PoDS's experiments on takt", "",
          f"Command: `{result['command']}` on {m['cpus']} CPUs ({m['cpu_model']}, kernel {m['kernel']}). Each point "
          "runs takt (TIDE executors, daemons in PoDS mode) and the baseline (batch = rclc executors, daemons in "
          "micro-ROS mode: blocking transmit, blocking reliable publish, FIFO reception), one after the other. "
          "Chains timer -> relay on the far side (zero work, 10-byte reply) -> sink, period 500 ms, over an "
          "emulated line at 115200 baud (10 bit times per byte); the two sides are two processes, each with its "
          "own executor thread (SCHED_FIFO 80 and 70), each sending through `emu:baud=115200,.../udp:` on "
          "loopback (the emulator applies line rate and faults to its own transmissions). Latency of the "
          "highest-priority chain from "
          f"its timer's release to the end of its sink; {samples} periods per point (PoDS: 500 for the reliable "
          "sweep). Reliable sweep: the emulator fails the first transmission of data frames with probability "
          "1 - success.", "",
          "| sweep | x | takt min | mean | max | std | baseline min | mean | max | std | takt/baseline max |",
          "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for sweep, x, *_ in points:
        t, b = get(sweep, x, "takt"), get(sweep, x, "baseline")
        md.append(f"| {sweep} | {x} | {ms(t['min_ns'])} | {ms(t['mean_ns'])} | {ms(t['max_ns'])} | {ms(t['std_ns'])} | "
                  f"{ms(b['min_ns'])} | {ms(b['mean_ns'])} | {ms(b['max_ns'])} | {ms(b['std_ns'])} | "
                  f"{t['max_ns'] / b['max_ns']:.2f} |")
    md += ["", "Latency in ms. x: number of chains, payload bytes, callback work in ms, or success probability in %.", ""]
    write_markdown(out, NAME, md)
    return 0
