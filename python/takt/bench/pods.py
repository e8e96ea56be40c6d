"""`takt bench pods`: PoDS's experiments (chains, payload, work, reliable delivery over a lossy
115200-baud line) on takt beside the micro-ROS baseline (rclc executors, blocking transport)."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path
from typing import Dict, List, Optional

from takt import native
from takt.bench.common import BenchFailed, command, machine, ratio, run_native, write_json, write_markdown

NAME = "pods"


BAUD = 115200
FRAME_OVERHEAD = 18 + 4 + 2  # header, CRC, two flags (docs/protocol.md)


def frame_time_ms(payload: int) -> float:
    """Line time of the chains sweep's largest frame, its request (payload bytes of zeros: nothing
    byte-stuffed in the payload), at 10 bit times per byte."""
    return (payload + FRAME_OVERHEAD) * 10 * 1000 / BAUD


def goals(get, hi: int, reliable_points, preempt: str) -> tuple:
    """The issue's goals for takt: the top chain at hi chains (5; 3 in the smoke mode) against 1
    chain — takt (tide holding for chains in flight: the keys the issue names), tide without the
    hold as PoDS has it (variant `takt-pods`, keys `pods_...`) and with the MCU side preemptive
    (variant `preempt`, keys `preempt_...`) —, and the reliable sweep at 0 % first-try success.
    (headline entries, goal rows)."""
    ms = lambda ns: round(ns / 1e6, 2)  # noqa: E731
    frame = round(frame_time_ms(100), 2)
    head: Dict[str, object] = {"chains_frame_time_ms": frame}
    rows = []
    for variant, prefix, label in (("takt", "", "takt (tide holding for chains, non-preemptive)"),
                                   ("takt-pods", "pods_", "takt-pods (tide without the hold, as PoDS)"),
                                   (preempt, "preempt_", f"{preempt} (MCU side preemptive)")):
        one, top = get("chains", 1, variant), get("chains", hi, variant)
        dmax = ms(top["max_ns"] - one["max_ns"])
        ratio = round(top["mean_ns"] / max(1, one["mean_ns"]), 3)
        kmax, kratio = f"{prefix}chains{hi}_top_max_minus_chains1_max_ms", f"{prefix}chains{hi}_top_mean_over_chains1_mean"
        head[kmax], head[kratio] = dmax, ratio
        if variant == "takt-pods":  # the reference: what the hold buys (the chains table shows it)
            continue
        rows += [(f"{label}: top chain max at {hi} chains − max at 1 chain, ms (`{kmax}`)",
                  f"≤ {frame} (one 124-byte request frame at {BAUD} baud, `chains_frame_time_ms`)", dmax,
                  dmax <= frame),
                 (f"{label}: top chain mean at {hi} chains / mean at 1 chain (`{kratio}`)", "≤ 1.05", ratio,
                  ratio <= 1.05)]
    if 0 in reliable_points:
        r0 = ms(get("reliable", 0, "takt")["mean_ns"])
        rows.append(("reliable sweep, mean at 0 % first-try success, ms (`takt_reliable_0pct_mean_ms`; "
                     "PoDS 48.97)", "≤ 55", r0, r0 <= 55))
    return head, rows


CHAINS_VARIANTS = ("takt", "takt-pods", "takt-preempt", "baseline")


def chains_lines(points, get, preempt_what: str) -> List[str]:
    """The chains sweep of the three takt variants side by side: the top chain, and the lowest
    chain's mean (what holding for the top chain costs the others)."""
    ms = lambda ns: round(ns / 1e6, 2)  # noqa: E731
    md = ["Chains sweep of takt's three variants: `takt` (tide holding for chains in flight: a lower "
          "callback does not start when a higher chain's reply could come before it ends; "
          "docs/executors.md), `takt-pods` (tide without the hold: PoDS's TIDE) and `takt-preempt` "
          f"({preempt_what}). Top: the highest-priority chain; low: the lowest chain's mean; holds: "
          "times the MCU side's tide held the head of its ReadyList.", "",
          "| chains | takt top mean | max | low mean | holds | takt-pods top mean | max | low mean | "
          "takt-preempt top mean | max | low mean |",
          "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for sweep, x, *_ in points:
        if sweep != "chains":
            continue
        t, p, q = get(sweep, x, "takt"), get(sweep, x, "takt-pods"), get(sweep, x, "takt-preempt")
        md.append(f"| {x} | {ms(t['mean_ns'])} | {ms(t['max_ns'])} | {ms(t['low_mean_ns'])} | {t['holds']} | "
                  f"{ms(p['mean_ns'])} | {ms(p['max_ns'])} | {ms(p['low_mean_ns'])} | "
                  f"{ms(q['mean_ns'])} | {ms(q['max_ns'])} | {ms(q['low_mean_ns'])} |")
    return md + [""]


def max_ratio(t: dict, b: dict, digits: int) -> Optional[float]:
    """takt's max / the baseline's, None (n/a) when the baseline's is 0: a point whose baseline
    took no sample (the program prints count 0 and zeros) has no ratio, it is not an error."""
    return ratio(t["max_ns"], b["max_ns"], digits)


def _ratio_text(v: Optional[float]) -> str:
    return "n/a" if v is None else f"{v:.2f}"


def goal_lines(rows) -> List[str]:
    md = ["## Goals", "", "| | goal | measured | met |", "|---|---|---:|---|"]
    md += [f"| {w} | {g} | {m} | {'yes' if ok else 'no'} |" for w, g, m, ok in rows]
    return md + [""]


def sweep_points(quick: bool):
    """(sweep, x, chains, payload, work_ms, reliable, success_pct) as in PoDS §6.2, period 500 ms."""
    points = []
    for n in ([1, 3] if quick else [1, 2, 3, 4, 5]):
        points.append(("chains", n, n, 100, 10, 0, 100))
    for b in ([100, 500] if quick else [100, 200, 300, 400, 500]):
        points.append(("payload", b, 3, b, 5, 0, 100))
    for w in ([10, 50] if quick else [10, 20, 30, 40, 50]):
        points.append(("work", w, 3, 100, w, 0, 100))
    for sp in ([0, 100] if quick else [0, 20, 40, 60, 80, 100]):
        points.append(("reliable", sp, 3, 100, 10, 1, sp))
    return points


def smoke_points(points):
    """The smoke mode's: both ends of the chains and reliable sweeps, one point of the others."""
    keep = {("chains", 1), ("chains", 3), ("payload", 100), ("work", 10), ("reliable", 0), ("reliable", 100)}
    return [p for p in points if (p[0], p[1]) in keep]


def run(quick: bool, out: Path) -> int:
    exe = native.program("bench/takt-bench-pods")
    samples = 2 if quick else 20
    points = sweep_points(quick)
    if quick:
        points = smoke_points(points)
    rows = []
    for i, (sweep, x, chains, payload, work, rel, sp) in enumerate(points):
        variants = CHAINS_VARIANTS if sweep == "chains" else ("takt", "baseline")
        for variant in variants:  # interleaved, point by point
            r = run_native(exe, [variant, str(chains), str(payload), str(work), "500", str(samples),
                                 str(rel), str(sp), str(1000 + i)])
            r.update({"sweep": sweep, "x": x})
            rows.append(r)
    return report(rows, quick, out, samples, points)


def report(rows, quick: bool, out: Path, samples: int, points) -> int:
    """`takt bench pods`'s JSON and Markdown from its rows (also to render a run's saved rows)."""
    def get(sweep, x, variant):
        return next(r for r in rows if r["sweep"] == sweep and r["x"] == x and r["variant"] == variant)

    ms = lambda ns: round(ns / 1e6, 2)
    headline: Dict[str, object] = {
        "takt_over_baseline_max_at_3_chains": max_ratio(get("chains", 3, "takt"), get("chains", 3, "baseline"), 3),
        "takt_max_ms_at_3_chains": ms(get("chains", 3, "takt")["max_ns"]),
        "baseline_max_ms_at_3_chains": ms(get("chains", 3, "baseline")["max_ns"]),
    }
    hi = 5 if not quick else 3
    for v in ("takt", "baseline"):
        headline[f"{v}_max_ms_{hi}_chains_minus_1_chain"] = ms(get("chains", hi, v)["max_ns"] - get("chains", 1, v)["max_ns"])
    for sp in ([0, 100] if quick else [0, 20, 40, 60, 80, 100]):
        for v in ("takt", "baseline"):
            headline[f"{v}_reliable_{sp}pct_mean_ms"] = ms(get("reliable", sp, v)["mean_ns"])
    head, goal_rows = goals(get, hi, [0, 100] if quick else [0, 20, 40, 60, 80, 100], "takt-preempt")
    headline.update(head)
    m = machine()
    result = {"benchmark": NAME, "command": command(NAME, quick), "machine": m,
              "quick": quick, "samples_per_point": samples, "headline": headline, "rows": rows,
              "goals": [{"what": w, "goal": g, "measured": v, "met": ok} for w, g, v, ok in goal_rows]}
    write_json(out, NAME, result)
    md = ["# pods: PoDS's experiments on takt", "",
          f"Command: `{result['command']}` on {m['cpus']} CPUs ({m['cpu_model']}, kernel {m['kernel']}). Each point "
          "runs takt (TIDE executors holding for chains in flight, daemons in PoDS mode) and the baseline (batch = rclc executors, daemons in "
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
                  f"{_ratio_text(max_ratio(t, b, 2))} |")
    md += ["", "Latency in ms. x: number of chains, payload bytes, callback work in ms, or success probability in %.", ""]
    md += chains_lines(points, get,
                       "the microcontroller side's callbacks on the preempt executor (fixed priorities, its "
                       "SCHED_FIFO workers all on one CPU: one core, as the MCU has), a node (a mutually exclusive "
                       "group) per chain, so the top chain's sink preempts a lower chain's running timer callback; "
                       "the agent side and the daemons as takt's")
    md += goal_lines(goal_rows)
    write_markdown(out, NAME, md)
    return 0


def run_mcu_point(exe: Path, elf: Path, args: List[str], workdir: Path) -> dict:
    """One point with the MCU side in QEMU: the firmware (bench_pods_mcu.c) on mps2-an500 with UART1
    on a pseudo-terminal, the agent side (takt-bench-pods agent) on that terminal; the JSON line the
    firmware prints when its samples are done."""
    import subprocess
    from takt.commands.mcu import Qemu
    # guest time by instruction count (32 ns each, about a 25 MHz core's pace) while the guest
    # runs, the host's time while it sleeps: the paced UART's per-byte timer then fires on time
    # (without it, at the host's timer granularity: a 1-chain mean of 49 ms instead of 37 here)
    qemu = Qemu("qemu-system-arm", "mps2-an500", elf, workdir, append=" ".join(args), echo=False,
                extra=["-icount", "shift=5,sleep=on"])
    agent = subprocess.Popen([str(exe), "agent", f"serial:{qemu.pty}"] + args,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(1.2)  # QEMU notices the opened terminal on a 1 s timer
        qemu.monitor("cont")
        period_s = int(args[4]) / 1000
        qemu.p.wait(timeout=30 + int(args[5]) * period_s * 3)
    finally:
        agent.send_signal(signal.SIGINT)
        try:
            agent.wait(10)
        except subprocess.TimeoutExpired:
            agent.kill()
            agent.wait()
        qemu.stop()
    for line in reversed(qemu.console):
        if line.startswith("{"):
            r = json.loads(line)
            if "error" in r:
                raise BenchFailed(f"firmware: {r['error']}")
            for k in ("min", "mean", "std", "p50", "max", "low_mean", "low_max"):
                r[f"{k}_ns"] = r.pop(f"{k}_us") * 1000
            r["processes"] = "mcu in QEMU + agent"
            return r
    raise BenchFailed("the firmware printed no result: " + "".join(qemu.console[-5:]))


def run_mcu(quick: bool, out: Path) -> int:
    """`takt bench pods --mcu`: the four sweeps with the MCU side in QEMU (mps2-an500), its line at
    115200 baud paced in the firmware and the agent's paced by its link emulator; takt and the
    baseline point by point."""
    exe = native.program("bench/takt-bench-pods")
    elf = native.build_dir() / "fw" / "mps2-an500" / "takt-fw-bench-pods.elf"
    if not elf.is_file():
        raise native.NativeMissing(f"{elf} is not built (arm-none-eabi-gcc and `make`: tools/deps.sh)")
    samples = 2 if quick else 20
    points = sweep_points(quick)
    if quick:
        points = smoke_points(points)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for i, (sweep, x, chains, payload, work, rel, sp) in enumerate(points):
        variants = CHAINS_VARIANTS if sweep == "chains" else ("takt", "baseline")
        for variant in variants:
            r = run_mcu_point(exe, elf, [variant, str(chains), str(payload), str(work), "500", str(samples),
                                         str(rel), str(sp), str(1000 + i)], out)
            r.update({"sweep": sweep, "x": x})
            rows.append(r)
            print(f"pods --mcu: {sweep} {x} {variant}: mean {r['mean_ns'] / 1e6:.1f} ms, max {r['max_ns'] / 1e6:.1f} ms "
                  f"({r['count']} samples)", flush=True)
    return report_mcu(rows, quick, out, samples, points)


def report_mcu(rows, quick: bool, out: Path, samples: int, points) -> int:
    """`takt bench pods --mcu`'s JSON and Markdown from its rows."""
    def get(sweep, x, variant):
        return next(r for r in rows if r["sweep"] == sweep and r["x"] == x and r["variant"] == variant)

    ms = lambda ns: round(ns / 1e6, 2)  # noqa: E731
    headline: Dict[str, object] = {
        "takt_over_baseline_max_at_3_chains": max_ratio(get("chains", 3, "takt"), get("chains", 3, "baseline"), 3),
        "takt_max_ms_at_3_chains": ms(get("chains", 3, "takt")["max_ns"]),
        "baseline_max_ms_at_3_chains": ms(get("chains", 3, "baseline")["max_ns"]),
    }
    hi = 3 if quick else 5
    for v in ("takt", "baseline"):
        headline[f"{v}_max_ms_{hi}_chains_minus_1_chain"] = ms(get("chains", hi, v)["max_ns"] - get("chains", 1, v)["max_ns"])
    for sp in sorted({p[1] for p in points if p[0] == "reliable"}):
        for v in ("takt", "baseline"):
            headline[f"{v}_reliable_{sp}pct_mean_ms"] = ms(get("reliable", sp, v)["mean_ns"])
    head, goal_rows = goals(get, hi, sorted({p[1] for p in points if p[0] == "reliable"}), "takt-preempt")
    headline.update(head)
    m = machine()
    name = NAME + "_mcu"
    result = {"benchmark": name, "command": command(NAME, quick) + " --mcu", "machine": m, "quick": quick,
              "samples_per_point": samples, "headline": headline, "rows": rows,
              "goals": [{"what": w, "goal": g, "measured": v, "met": ok} for w, g, v, ok in goal_rows]}
    write_json(out, name, result)
    md = ["# pods --mcu: PoDS's experiments with the MCU side on a Cortex-M7 in QEMU", "",
          f"Command: `{result['command']}` on {m['cpus']} CPUs ({m['cpu_model']}). The MCU side "
          "(bench/pods/bench_pods_mcu.c: timers and sinks, tide holding for chains in flight + PoDS daemon, or batch + micro-ROS-like daemon) "
          "runs on QEMU's mps2-an500 with its UART paced at 115200 baud (10 bit times per byte); the agent side "
          "(takt-bench-pods agent: the relays) runs on the host on QEMU's pseudo-terminal, its transmissions "
          "paced at 115200 baud by its link emulator. QEMU runs with -icount shift=5,sleep=on (guest time by "
          "instruction count while the guest runs, the host's while it sleeps). "
          f"{samples} periods of 500 ms per point.", "",
          "| sweep | x | takt min | mean | max | std | baseline min | mean | max | std | takt/baseline max |",
          "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for sweep, x, *_ in points:
        t, b = get(sweep, x, "takt"), get(sweep, x, "baseline")
        md.append(f"| {sweep} | {x} | {ms(t['min_ns'])} | {ms(t['mean_ns'])} | {ms(t['max_ns'])} | {ms(t['std_ns'])} | "
                  f"{ms(b['min_ns'])} | {ms(b['mean_ns'])} | {ms(b['max_ns'])} | {ms(b['std_ns'])} | "
                  f"{_ratio_text(max_ratio(t, b, 2))} |")
    md += ["", "Latency in ms of the highest-priority chain. x: chains, payload bytes, work in ms, or success %.", ""]
    md += chains_lines(points, get,
                       "the MCU side on the swi executor (preemption on NVIC levels, one stack), a node (a "
                       "mutually exclusive group) per chain, the chains' priorities spread over the four levels, "
                       "so the top chain's sink preempts a lower chain's running timer callback; the agent side "
                       "and the daemons as takt's")
    md += goal_lines(goal_rows)
    write_markdown(out, name, md)
    return 0
