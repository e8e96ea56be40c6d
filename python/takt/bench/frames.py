"""`takt bench frames`: the most urgent frame on a busy serial line, with frame preemption
(takt_daemon_config_t.preempt_frames: the frame on the line suspended and resumed, the default, or
cut and sent again), without it (PoDS's daemon: the urgent frame waits for the frame on the line),
and with the micro-ROS-like daemon (it also waits for what is queued before it), in one run
(bench/frames/bench_frames.c)."""

from __future__ import annotations

from pathlib import Path
from typing import Dict, List

from takt import native
from takt.bench.common import (command, cpu_latency_held, machine, machine_line, percentiles, ratio, run_json,
                               write_json, write_markdown)

NAME = "frames"
MODES = ["preempt", "preempt-cut", "preempt-cut-unlimited", "pods", "microros"]
LABELS = {"preempt": "takt, preempt_frames (the frame on the line suspended and resumed: the default)",
          "preempt-cut": "takt, preempt_frames cutting (preempt_resume false; a frame cut at most once)",
          "preempt-cut-unlimited": "takt, preempt_frames cutting, preempt_cuts_max 0 (no limit)",
          "pods": "takt, PoDS daemon (no preemption)", "microros": "micro-ROS-like daemon"}
BAUD = 115200
BULK = 1024    # payload bytes of a bulk frame: the daemon's default max_payload
URGENT = 16    # payload bytes of the urgent frame
PERIOD_MS = 100
BULK_GOAL = 0.97  # the bulk stream with suspensions against without preemption: nothing sent twice


def key(mode: str) -> str:
    """A mode's name in the headline's keys."""
    return mode.replace("-", "_")


def wire_bytes(payload: int, header: int = 18, crc: int = 4) -> int:
    """Bytes of a frame on the line before stuffing: two flags, header, payload, CRC
    (docs/protocol.md). Stuffed bytes add a few (the bulk payload holds every byte value)."""
    return 2 + header + payload + crc


def line_ms(n: int) -> float:
    return n * 10 * 1e3 / BAUD


def run(quick: bool, out: Path) -> int:
    exe = native.program("bench/takt-bench-frames")
    blocks, per_cell = (1, 20) if quick else (4, 100)
    samples: Dict[str, List[float]] = {m: [] for m in MODES}
    cut: Dict[str, int] = {m: 0 for m in MODES}
    suspended: Dict[str, int] = {m: 0 for m in MODES}
    bulk_frames: Dict[str, int] = {m: 0 for m in MODES}
    measured_s: Dict[str, float] = {m: 0.0 for m in MODES}
    errors: Dict[str, List[str]] = {}
    with cpu_latency_held() as held:
        for b in range(blocks):
            for mode in (MODES if b % 2 == 0 else MODES[::-1]):
                d, why = run_json([str(exe), mode, str(BAUD), str(BULK), str(URGENT), str(PERIOD_MS),
                                   str(per_cell), str(1000 + b)], 60 + per_cell * PERIOD_MS / 1000)
                if d is None:
                    errors.setdefault(mode, []).extend(why)
                    continue
                samples[mode] += d["samples_ns"]
                cut[mode] += d["frames_cut"]
                suspended[mode] += d["frames_suspended"]
                bulk_frames[mode] += d["bulk_arrived"] - d["bulk_before"]
                measured_s[mode] += d["measured_ns"] / 1e9
                print(f"frames: block {b} {mode}: {len(d['samples_ns'])} urgent frames, cut {d['frames_cut']}, "
                      f"suspended {d['frames_suspended']}")
    stats = {m: percentiles(v) for m, v in samples.items() if v}
    urgent_ms = line_ms(wire_bytes(URGENT))
    bulk_ms = line_ms(wire_bytes(BULK))
    abort_ms = line_ms(1)
    # its own frame, the byte on the line and the suspend code (two bytes), 1 ms for the threads
    goal_ms = urgent_ms + 3 * abort_ms + 1.0
    headline: Dict[str, object] = {
        "urgent_frame_ms": round(urgent_ms, 3), "bulk_frame_ms": round(bulk_ms, 3),
        "byte_ms": round(abort_ms, 4)}
    for m, s in stats.items():
        k = key(m)
        headline[f"{k}_p50_ms"] = round(s["p50"] / 1e6, 3)
        headline[f"{k}_p99_ms"] = round(s["p99"] / 1e6, 3)
        headline[f"{k}_max_ms"] = round(s["max"] / 1e6, 3)
        headline[f"{k}_bulk_kB_per_s"] = round(bulk_frames[m] * BULK / 1e3 / measured_s[m], 2) if measured_s[m] else None
    if "preempt" in stats and "pods" in stats:
        headline["max_preempt_over_pods"] = ratio(stats["preempt"]["max"], stats["pods"]["max"], 3)
        headline["bulk_preempt_over_pods"] = ratio(headline["preempt_bulk_kB_per_s"],
                                                   headline["pods_bulk_kB_per_s"], 3)
    if "preempt-cut-unlimited" in stats and "pods" in stats:
        headline["bulk_preempt_cut_unlimited_over_pods"] = ratio(headline["preempt_cut_unlimited_bulk_kB_per_s"],
                                                                 headline["pods_bulk_kB_per_s"], 3)
    bulk_ratio = headline.get("bulk_preempt_over_pods")
    goals = [{"name": "preempt_max_ms",
              "text": "urgent frame max with preempt_frames (suspending: the default), ms",
              "goal": f"<= {goal_ms:.2f} (the urgent frame's own {urgent_ms:.2f} ms, the byte on the line and the "
              f"suspend code {3 * abort_ms:.3f} ms, 1 ms for the threads)",
              "measured": headline.get("preempt_max_ms"),
              "met": "preempt" in stats and stats["preempt"]["max"] / 1e6 <= goal_ms},
             {"name": "bulk_preempt_over_pods",
              "text": "bulk stream delivered with preempt_frames (suspending) / without preemption",
              "goal": f">= {BULK_GOAL} (nothing sent twice)", "measured": bulk_ratio,
              "met": bulk_ratio is not None and bulk_ratio >= BULK_GOAL}]
    m_ = machine()
    result = {"benchmark": NAME, "command": command(NAME, quick), "machine": m_, "quick": quick,
              "blocks": blocks, "per_cell": per_cell, "baud": BAUD, "bulk_bytes": BULK, "urgent_bytes": URGENT,
              "period_ms": PERIOD_MS, "cpu_dma_latency_0": held, "headline": headline, "goals": goals,
              "stats_ns": stats, "frames_cut": cut, "frames_suspended": suspended, "bulk_frames": bulk_frames,
              "measured_s": measured_s,
              "errors": errors}
    write_json(out, NAME, result)
    md = ["# frames: the urgent frame on a busy serial line", "",
          f"Command: `{result['command']}` on {machine_line(m_)}. One process, two communication daemons "
          f"joined by the link emulator with its threads at {BAUD} baud (10 bit times per byte): a bulk "
          f"stream of {BULK}-byte frames (priority 1, two kept outstanding: the line is always busy) and an "
          f"urgent {URGENT}-byte frame (priority 9) every {PERIOD_MS} ms at a random phase in the first half "
          "of the period; latency from the urgent frame's send to its arrival at the far daemon. "
          f"On the line: the urgent frame {urgent_ms:.2f} ms, a bulk frame {bulk_ms:.2f} ms, a byte "
          f"{abort_ms:.3f} ms (a cut costs one abort byte, a suspension two for the suspend code and two for the "
          f"resume code). {blocks} block(s) × {per_cell} urgent frames per mode, the modes in turn "
          "(bench/frames/bench_frames.c; docs/transport.md, frame preemption).", "",
          "| daemon | urgent frames | p50 ms | p90 ms | p99 ms | max ms | bulk frames cut | bulk frames suspended | "
          "bulk kB/s delivered |",
          "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for m in MODES:
        s = stats.get(m)
        if s is None:
            md.append(f"| {LABELS[m]} | 0 | n/a | n/a | n/a | n/a | — | — | — |")
            continue
        md.append(f"| {LABELS[m]} | {s['count']} | {s['p50'] / 1e6:.2f} | {s['p90'] / 1e6:.2f} | "
                  f"{s['p99'] / 1e6:.2f} | {s['max'] / 1e6:.2f} | {cut[m]} | {suspended[m]} | "
                  f"{headline[key(m) + '_bulk_kB_per_s']} |")
    md += ["", "## Goal", "", "| | goal | measured | met |", "|---|---|---:|---|"]
    for g in goals:
        md.append(f"| {g['text']} (`{g['name']}`) | {g['goal']} | {g['measured']} | "
                  f"{'yes' if g['met'] else 'no'} |")
    md += ["", "What preemption costs. A suspended bulk frame goes on where it stopped: the line carries each "
           "of its bytes once, plus four code bytes a suspension, so the bulk stream delivers what it does "
           "without preemption, and no limit is needed (the first row). A cut bulk frame is sent again whole, "
           "so cutting costs the bulk stream while urgent frames come (the last column). Cutting without a "
           "limit, a bulk frame longer than the time between urgent frames would never get through; with the "
           "limit (each frame cut at most once) every bulk frame gets through on its second try, and an urgent "
           "frame that finds a frame on its second try waits for it, as without preemption (the p90 and max "
           "of the second row)."]
    if errors:
        md += ["", f"Errors: {errors}"]
    write_markdown(out, NAME, md)
    return 0 if stats and not errors else 1
