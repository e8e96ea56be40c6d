"""`takt bench trace`: the hot-path cost of recording a scheduling trace (takt/trace.h), on and off,
in one run: a timer -> topic -> subscription chain on tide (3 trace events per round), blocks of
rounds alternating between tracing off and on; then a publication's trace point recorded by one
thread and by two threads at once (what one recorder costs another)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Dict

from takt import native
from takt.bench.common import BenchFailed, command, machine, percentiles, run_native, write_json, write_markdown

NAME = "trace"


def run(quick: bool, out: Path) -> int:
    exe = native.program("bench/takt-bench-trace")
    try:
        raw = run_native(exe, ["--quick"] if quick else [])
    except BenchFailed as e:
        print(f"takt bench: {e}", file=sys.stderr)
        return 1
    off = percentiles(raw["off_ns"])
    on = percentiles(raw["on_ns"])
    per_round = raw["events_per_round"]
    # per publication, from batch means in hundredths of a nanosecond
    par = {k: percentiles([v / 100.0 for v in raw[k + "_cns"]])
           for k in ("one_off", "one_on", "two_off", "two_on")}
    one_cost = par["one_on"]["p50"] - par["one_off"]["p50"]
    two_cost = par["two_on"]["p50"] - par["two_off"]["p50"]
    headline: Dict[str, object] = {
        "round_p50_ns_off": off["p50"], "round_p50_ns_on": on["p50"],
        "round_p99_ns_off": off["p99"], "round_p99_ns_on": on["p99"],
        "per_event_p50_ns": round((on["p50"] - off["p50"]) / per_round, 1),
        "per_event_p99_ns": round((on["p99"] - off["p99"]) / per_round, 1),
        "on_over_off_p50": round(on["p50"] / off["p50"], 3),
        "events_lost": raw["events_lost"],
        "publish_event_p50_ns_one_thread": round(one_cost, 1),
        "publish_event_p50_ns_two_threads": round(two_cost, 1),
        "two_over_one_thread": round(two_cost / one_cost, 2) if one_cost > 0 else None,
        "parallel_events_lost": raw["parallel_events_lost"],
    }
    m = machine()
    result = {"benchmark": NAME, "command": command(NAME, quick), "machine": m, "quick": quick,
              "rounds_per_mode": len(raw["off_ns"]), "events_per_round": per_round,
              "events_recorded": raw["events_recorded"], "failed_rounds": raw["failed_rounds"],
              "headline": headline, "off": off, "on": on, "parallel": par,
              "parallel_batch": raw["parallel_batch"], "parallel_failed": raw["parallel_failed"]}
    json_path = write_json(out, NAME, result)
    md = ["# trace", "",
          f"Command: `{result['command']}` on {m['cpus']} CPUs ({m['cpu_model']}, kernel {m['kernel']}). "
          "One round: a timer's job publishes, a subscription's job consumes it, on `tide` with a fake "
          f"clock ({per_round} trace events per round: two jobs and a publication). Blocks of rounds "
          "alternate between tracing off and on in the same process; CLOCK_MONOTONIC measures each "
          f"round. {len(raw['off_ns'])} rounds per mode, {raw['events_recorded']} events recorded, "
          f"{raw['events_lost']} lost.", "",
          "| tracing | min ns | p50 ns | p90 ns | p99 ns | max ns |", "|---|---:|---:|---:|---:|---:|"]
    for label, d in (("off", off), ("on", on)):
        md.append(f"| {label} | {d['min']:.0f} | {d['p50']:.0f} | {d['p90']:.0f} | {d['p99']:.0f} | {d['max']:.0f} |")
    md += ["", f"Per event (on − off, divided by {per_round}): p50 {headline['per_event_p50_ns']} ns, "
           f"p99 {headline['per_event_p99_ns']} ns; a round with tracing on costs "
           f"{headline['on_over_off_p50']}x a round with it off (p50).", "",
           "Off, each trace point is one relaxed load of the context's trace pointer and a branch; "
           "the cost of that against a build without trace points is measured by running "
           "`takt bench tide_overhead` on both (docs/results/trace.md records it when it was done).", "",
           "## One and two threads recording at once", "",
           "Each thread publishes to a topic of its own on the same context (no subscriber: one trace "
           "event per publication); a sample is the mean over a batch of "
           f"{raw['parallel_batch']} publications of thread 0, blocks alternating tracing off and on, "
           "first with thread 0 alone, then with a second thread publishing beside it.", "",
           "| threads | tracing | p50 ns | p90 ns | p99 ns | max ns |", "|---|---|---:|---:|---:|---:|"]
    for label, key in (("1", "one_off"), ("1", "one_on"), ("2", "two_off"), ("2", "two_on")):
        d = par[key]
        md.append(f"| {label} | {key.split('_')[1]} | {d['p50']:.1f} | {d['p90']:.1f} | {d['p99']:.1f} | "
                  f"{d['max']:.1f} |")
    ratio = headline["two_over_one_thread"]
    md += ["", f"A publication's trace event (on − off, p50): {headline['publish_event_p50_ns_one_thread']} ns "
           f"alone, {headline['publish_event_p50_ns_two_threads']} ns with another thread recording "
           f"({ratio if ratio is not None else 'n/a'}x); {raw['parallel_events_lost']} events lost.", ""]
    md_path = write_markdown(out, NAME, md)
    print(f"wrote {json_path} and {md_path}")
    return 0 if raw["failed_rounds"] == 0 and raw["parallel_failed"] == 0 else 1
