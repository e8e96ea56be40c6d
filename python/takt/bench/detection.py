"""`takt bench detection`: critical instant of a HARD subscription to the start of its recovery
handler, beside cyclictest at the same priority (the OS floor)."""

from __future__ import annotations

from pathlib import Path
from typing import Dict, List

from takt import native
from takt.bench.common import command, cyclictest, machine, percentiles, run_native, write_json, write_markdown

NAME = "detection"


def run(quick: bool, out: Path) -> int:
    exe = native.program("bench/takt-bench-detection")
    prio = 99
    blocks, per_block = (2, 100) if quick else (4, 2500)
    takt_ns: List[float] = []
    floor_ns: List[float] = []
    sched = False
    for _ in range(blocks):  # interleaved: takt, cyclictest, takt, cyclictest, ...
        raw = run_native(exe, [str(per_block), str(prio)])
        takt_ns += raw["delay_ns"]
        sched = raw["sched_fifo"]
        floor_ns += cyclictest(per_block, prio)
    t = percentiles(takt_ns)
    headline: Dict[str, object] = {"takt_p50_us": round(t["p50"] / 1e3, 1), "takt_p99_us": round(t["p99"] / 1e3, 1),
                                   "takt_max_us": round(t["max"] / 1e3, 1), "sched_fifo": sched}
    f = percentiles(floor_ns) if floor_ns else None
    if f:
        headline.update({"cyclictest_p50_us": round(f["p50"] / 1e3, 1), "cyclictest_p99_us": round(f["p99"] / 1e3, 1),
                         "cyclictest_max_us": round(f["max"] / 1e3, 1),
                         "p50_over_floor": round(t["p50"] / max(f["p50"], 1.0), 2),
                         "p99_over_floor": round(t["p99"] / max(f["p99"], 1.0), 2),
                         "p50_above_floor_us": round((t["p50"] - f["p50"]) / 1e3, 1)})
    m = machine()
    result = {"benchmark": NAME, "command": command(NAME, quick),
              "machine": m, "quick": quick, "priority": prio, "headline": headline,
              "takt": t, "cyclictest": f, "takt_delay_ns": takt_ns}
    write_json(out, NAME, result)
    us = lambda d, k: f"{d[k] / 1e3:.1f}" if d else "n/a"
    md = ["# detection: critical instant to handler start", "",
          f"Command: `{result['command']}` on {m['cpus']} CPUs ({m['cpu_model']}, kernel {m['kernel']}), "
          f"no other load. takt: a HARD subscription (tau 1 ms) whose message is never fetched; the validator "
          f"thread (SCHED_FIFO {prio}{'' if sched else ', refused: SCHED_OTHER'}) sleeps until the critical "
          "instant and the recovery handler records how late it started. Floor: cyclictest "
          f"(`cyclictest -m -p {prio} -i 1000 -h`) at the same priority and a 1 ms period, in blocks "
          f"interleaved with takt's ({blocks} x {per_block} samples each).", "",
          "| | count | min µs | p50 µs | p90 µs | p99 µs | p99.9 µs | max µs |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name, d in (("takt detection delay", t), ("cyclictest wake-up (floor)", f)):
        if d:
            md.append(f"| {name} | {d['count']} | {us(d, 'min')} | {us(d, 'p50')} | {us(d, 'p90')} | "
                      f"{us(d, 'p99')} | {us(d, 'p999')} | {us(d, 'max')} |")
        else:
            md.append(f"| {name} | cyclictest not installed | | | | | | |")
    if f:
        md += ["", f"takt / floor: p50 {headline['p50_over_floor']}x, p99 {headline['p99_over_floor']}x "
               f"({headline['p50_above_floor_us']} µs above the floor at p50)."]
    md.append("")
    write_markdown(out, NAME, md)
    return 0
