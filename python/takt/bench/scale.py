"""`takt bench scale`: how takt holds up as more CPUs, subscriptions and outside load come in.

Four parts, each comparing in one run, in interleaved blocks:
  throughput  publish + take in a tight loop, one thread vs two threads on CPUs 0 and 1, each with
              its own topic in one context (64 B and 4 KB); beside it the same bytes copied with
              memcpy (the floor, and the scaling the machine allows); messages/s and the ratio.
  fanout      publish -> callback start with 10 subscriptions on one topic: preempt vs waitset
              multi-threaded (takt-bench-rosrt's fanout10 scenario).
  timers      preempt's default timers (a thread per timer runs its jobs): p99 |jitter| vs
              a raw clock_nanosleep thread at every period of rosrt's timer sweep.
  io load     the one-process publish -> callback scenarios of rosrt (one subscription; + 100 idle
              subscriptions; 10-subscription fan-out), without and with `stress-ng --cpu 2 --io 2
              --hdd 1` beside at SCHED_OTHER: preempt p99 / waitset multi-threaded p99.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from takt import native
from takt.bench.common import Neighbours, command, cyclictest, distribution, git_commit, machine, machine_line, \
    percentiles, run_native, steal_ticks, stress_ng, stress_ng_path, write_json, write_markdown
from takt.bench.rosrt import CB_PRIO, PUB_PRIO, SCENARIOS, TIMER_PLAN, TIMER_PLAN_QUICK, overhead_samples, \
    timer_jitter

NAME = "scale"
PROGRAM = "bench/takt-bench-scale"
ROSRT = "bench/takt-bench-rosrt"
SIZES = [64, 4096]
THROUGHPUT_PRIO = 50  # SCHED_FIFO of the throughput threads (bench_scale.c's default)
RETRIES = 3  # runs of a throughput cell in which a thread missed part of the window are repeated
EXECS = ["preempt", "waitset"]  # takt-bench-rosrt's names: waitset = multi-threaded
STRESS_ARGS = ["--cpu", "2", "--io", "2", "--hdd", "1"]
SCENARIO_LABEL = {"single": "one subscription", "dummy100": "+100 idle subscriptions",
                  "fanout10": "10 subscriptions on one topic"}
BEFORE = Path("docs") / "results" / "scale-before.json"  # the single-lock state, for before/after

# (headline key, "ge"/"le", bound, what it says): the goals the lock refactor is measured against
GOALS: List[Tuple[str, str, float, str]] = [
    ("two_threads_over_one_64B", "ge", 1.6, "64 B messages/s, 2 threads / 1 thread"),
    ("two_threads_over_one_4KB", "ge", 1.6, "4 KB messages/s, 2 threads / 1 thread"),
    ("fanout10_p99_preempt_over_waitset", "le", 0.35, "10-subscription fan-out p99, preempt / waitset"),
]
GOALS += [(f"timer_{p}us_p99_jitter_preempt_over_raw", "le", 1.3,
           f"{p} µs timer, p99 of the absolute jitter, preempt / raw")
          for p, _ in TIMER_PLAN]
GOALS += [(f"io_load_{s}_p99_preempt_over_waitset", "le", 0.5, f"{SCENARIO_LABEL[s]} under I/O load, p99 "
           "preempt / waitset") for s in SCENARIOS]


def size_label(size: int) -> str:
    return f"{size // 1024}KB" if size >= 1024 and size % 1024 == 0 else f"{size}B"


def _ratio(a: Optional[float], b: Optional[float]) -> Optional[float]:
    """a / b, or None where either is missing (a cell without a run) or b is no divisor."""
    return round(a / b, 3) if a is not None and b is not None and b > 0 and a == a else None


# ---- throughput ------------------------------------------------------------------------------

def _throughput(exe: Path, quick: bool, load: Neighbours) -> Dict[str, object]:
    duration_ms, blocks = (30, 1) if quick else (250, 8)
    cells = []  # (op, threads, size, priority); priority 0 = SCHED_OTHER
    for size in SIZES:
        for op in ("takt", "memcpy"):
            cells += [(op, 1, size, THROUGHPUT_PRIO), (op, 2, size, THROUGHPUT_PRIO)]
        cells += [("takt", 1, size, 0), ("takt", 2, size, 0)]
    runs: Dict[tuple, List[Optional[dict]]] = {c: [] for c in cells}  # by block, None: missed
    discarded: Dict[tuple, int] = {c: 0 for c in cells}
    for b in range(blocks):
        for cell in (cells if b % 2 == 0 else cells[::-1]):  # interleaved, order alternating
            op, threads, size, prio = cell
            kept = None
            for _ in range(RETRIES):
                r = run_native(exe, ["throughput", op, str(threads), str(size), str(duration_ms), str(prio)])
                load.sample()
                if _whole_window(r):
                    kept = r
                    break
                discarded[cell] += 1
            # every try missed the window: no run of the cell in this block (a part-window rate
            # is no measurement of it); None keeps the blocks in step for the block-by-block ratios
            runs[cell].append(kept)
    rows = []
    for (op, threads, size, prio), by_block in runs.items():
        rs = [r for r in by_block if r is not None]
        per_msg = [ns / r["batch"] for r in rs for w in r["workers"] for ns in w["batch_ns"]]
        rate_per_run = [sum(w["messages"] / max(w["elapsed_ns"], 1) * 1e9 for w in r["workers"]) if r else None
                        for r in by_block]
        rate = sum(sum(w["messages"] for r in rs for w in r["workers"] if w["cpu"] == cpu) /
                   max(sum(w["elapsed_ns"] for r in rs for w in r["workers"] if w["cpu"] == cpu), 1) * 1e9
                   for cpu in range(threads)) if rs else None
        rows.append({"op": op, "threads": threads, "size": size, "priority": prio,
                     "sched_fifo": all(r["sched_fifo"] for r in rs) if rs else None, "runs": len(rs),
                     "runs_discarded": discarded[(op, threads, size, prio)], "runs_missed": len(by_block) - len(rs),
                     "max_start_late_us": round(max(w["late_ns"] for r in rs for w in r["workers"]) / 1e3, 1)
                     if rs else None,
                     "messages": sum(w["messages"] for r in rs for w in r["workers"]),
                     "errors": sum(w["errors"] for r in rs for w in r["workers"]),
                     "msgs_per_s": rate, "msgs_per_s_per_run": rate_per_run,
                     "ns_per_msg": percentiles(per_msg) if per_msg else {"count": 0}})
    batch = next((r["batch"] for rs in runs.values() for r in rs if r is not None), None)
    return {"duration_ms": duration_ms, "blocks": blocks, "batch": batch, "rows": rows}


def _whole_window(r: dict) -> bool:
    """Every thread ran (nearly) the whole window: none started late by more than a tenth of it
    (another process's real-time thread can hold a CPU that long on a shared machine)."""
    d = r["duration_ns"]
    return all(w["late_ns"] < d / 10 and w["elapsed_ns"] > d * 0.9 for w in r["workers"])


def _tp(rows: List[dict], op: str, threads: int, size: int, prio: int = THROUGHPUT_PRIO) -> dict:
    return next(r for r in rows if (r["op"], r["threads"], r["size"], r["priority"]) == (op, threads, size, prio))


def _scaling(rows: List[dict], op: str, size: int, prio: int = THROUGHPUT_PRIO) -> Tuple[Optional[float], List[float]]:
    """(2 threads / 1 thread over the whole run, the same ratio block by block: the blocks in
    which both cells have a run)."""
    one, two = _tp(rows, op, 1, size, prio), _tp(rows, op, 2, size, prio)
    per_block = [b / a for a, b in zip(one["msgs_per_s_per_run"], two["msgs_per_s_per_run"])
                 if a is not None and b is not None and a > 0]
    return _ratio(two["msgs_per_s"], one["msgs_per_s"]), per_block


# ---- publish -> callback: fan-out and I/O load -------------------------------------------------

def _overhead(exe: Path, quick: bool, tmp: Path, load: Neighbours) -> Dict[str, object]:
    count, period_us, blocks, ramp_s, settle_s = (40, 2000, 1, 0.5, 0.0) if quick else (500, 2000, 3, 1.0, 2.0)
    per_run_s = count * period_us / 1e6 + 0.3
    timeout_s = int(math.ceil(ramp_s + len(SCENARIOS) * len(EXECS) * per_run_s * 2 + 10))
    samples: Dict[tuple, List[float]] = {}
    expected: Dict[tuple, int] = {}
    stress_alive: Dict[tuple, bool] = {}
    floor: Dict[bool, List[float]] = {}
    steal: Dict[bool, List[float]] = {}
    for b in range(blocks):
        execs = EXECS if b % 2 == 0 else EXECS[::-1]
        for loaded in (False, True):
            with stress_ng(STRESS_ARGS, timeout_s, tmp) if loaded else contextlib.nullcontext() as proc:
                if loaded:
                    time.sleep(ramp_s)  # let its workers start and its files grow
                for scen in SCENARIOS:
                    for ex in execs:
                        got, want = overhead_samples(exe, ex, scen, count, period_us)
                        key = (loaded, scen, ex)
                        samples.setdefault(key, []).extend(got)
                        expected[key] = expected.get(key, 0) + want
                        # the load must have been there for the whole run
                        alive = proc is not None and proc.poll() is None
                        stress_alive[key] = stress_alive.get(key, True) and (alive or not loaded)
                        load.sample()
                # the floor under the same load: cyclictest at the callbacks' priority and the
                # publisher's period, and the CPU time the hypervisor took from this machine
                before = steal_ticks()
                t0 = time.monotonic()
                floor[loaded] = floor.get(loaded, []) + cyclictest(count, CB_PRIO, period_us)
                after = steal_ticks()
                if before is not None and after is not None:
                    cpu_s = (time.monotonic() - t0) * (os.cpu_count() or 1)
                    steal.setdefault(loaded, []).append((after - before) / os.sysconf("SC_CLK_TCK") / cpu_s)
            if loaded and settle_s:
                time.sleep(settle_s)  # its dirty pages written back before the next unloaded runs
    rows = []
    for (loaded, scen, ex), v in samples.items():
        rows.append({"stress": loaded,
                     "stress_present_throughout": stress_alive[(loaded, scen, ex)] if loaded else None,
                     "scenario": scen, "executor": ex, "expected": expected[(loaded, scen, ex)], "received": len(v),
                     "over_1ms": sum(1 for x in v if x > 1e6), **distribution(v)})
    floors = [{"stress": loaded, "received": len(v), "expected": count * blocks, "over_1ms": sum(1 for x in v if x > 1e6),
               "steal_fraction": statistics.fmean(steal[loaded]) if steal.get(loaded) else None, **distribution(v)}
              for loaded, v in sorted(floor.items()) if v]
    return {"count_per_run": count, "period_us": period_us, "blocks": blocks, "stress_timeout_s": timeout_s,
            "rows": rows, "floor": floors}


def _ov(rows: List[dict], loaded: bool, scen: str, ex: str) -> dict:
    return next(r for r in rows if (r["stress"], r["scenario"], r["executor"]) == (loaded, scen, ex))


# ---- timers ----------------------------------------------------------------------------------

def _timers(exe: Path, quick: bool, load: Neighbours) -> Dict[str, object]:
    # every period of rosrt's sweep, at least 1000 samples per cell in the full run
    plan = TIMER_PLAN_QUICK if quick else [(p, max(n, 1000)) for p, n in TIMER_PLAN]
    blocks = 1 if quick else 4
    rows = []
    for period, count in plan:
        per_block = max(1, -(-count // blocks))
        jit: Dict[str, List[float]] = {"preempt": [], "raw": []}
        for b in range(blocks):
            for ex in (("preempt", "raw") if b % 2 == 0 else ("raw", "preempt")):
                jit[ex] += timer_jitter(exe, ex, period, per_block)
                load.sample()
        for ex, v in jit.items():
            signed = distribution(v)
            rows.append({"period_us": period, "executor": ex, "abs": percentiles([abs(x) for x in v]),
                         "signed_p1": signed["p1"], "signed_mean": signed["mean"], "signed_p99": signed["p99"]})
    return {"blocks": blocks, "rows": rows}


def _tm(rows: List[dict], period: int, ex: str) -> dict:
    return next(r for r in rows if r["period_us"] == period and r["executor"] == ex)


# ---- report ----------------------------------------------------------------------------------

def _met(op: str, value: Optional[float], bound: float) -> Optional[bool]:
    if value is None:
        return None
    return value >= bound if op == "ge" else value <= bound


def _fmt(v: Optional[float]) -> str:
    return "n/a" if v is None else f"{v:.2f}" if v < 100 else f"{v:.0f}"


def _us(d: dict, k: str) -> str:
    return f"{d[k] / 1e3:.1f}" if d.get("count") else "n/a"


def _headline(result: Dict[str, object]) -> Dict[str, object]:
    head: Dict[str, object] = {}
    tp = result["throughput"]["rows"]
    for size in SIZES:
        lbl = size_label(size)
        head[f"two_threads_over_one_{lbl}"] = _scaling(tp, "takt", size)[0]
        head[f"memcpy_two_threads_over_one_{lbl}"] = _scaling(tp, "memcpy", size)[0]
        head[f"sched_other_two_threads_over_one_{lbl}"] = _scaling(tp, "takt", size, 0)[0]
        for threads, key in ((1, f"takt_1_thread_msgs_per_s_{lbl}"), (2, f"takt_2_threads_msgs_per_s_{lbl}")):
            rate = _tp(tp, "takt", threads, size)["msgs_per_s"]
            head[key] = None if rate is None else round(rate)
    ov = result["overhead"]["rows"]
    for loaded in (False, True):
        for scen in SCENARIOS:
            pre, ws = _ov(ov, loaded, scen, "preempt"), _ov(ov, loaded, scen, "waitset")
            if pre.get("count") and ws.get("count"):
                head[f"{'io_load' if loaded else 'no_load'}_{scen}_p99_preempt_over_waitset"] = _ratio(pre["p99"],
                                                                                                      ws["p99"])
    head["fanout10_p99_preempt_over_waitset"] = head.get("no_load_fanout10_p99_preempt_over_waitset")
    for f in result["overhead"].get("floor", []):
        where = "io_load" if f["stress"] else "no_load"
        if f.get("count"):
            head[f"{where}_cyclictest_p99_us"] = round(f["p99"] / 1e3, 1)
            head[f"{where}_cyclictest_over_1ms_percent"] = round(100.0 * f["over_1ms"] / f["count"], 2)
        if f.get("steal_fraction") is not None:
            head[f"{where}_steal_percent"] = round(100.0 * f["steal_fraction"], 2)
    for period in sorted({r["period_us"] for r in result["timers"]["rows"]}):
        pre, raw = _tm(result["timers"]["rows"], period, "preempt"), _tm(result["timers"]["rows"], period, "raw")
        head[f"timer_{period}us_p99_jitter_preempt_over_raw"] = _ratio(pre["abs"]["p99"], max(raw["abs"]["p99"], 1.0))
    return head


def _before_after(head: Dict[str, object], quick: bool) -> List[str]:
    """A before/after table against docs/results/scale-before.json, when it exists."""
    path = native.repo_root() / BEFORE
    if quick or not path.is_file():
        return []
    before = json.loads(path.read_text())
    bh = before.get("headline", {})
    md = ["## Before / after", "",
          f"Before: `{BEFORE}` (commit {before.get('source', {}).get('commit', '?')[:12]}, the single context lock).",
          "", "| | goal | before | now | met now |", "|---|---|---:|---:|---|"]
    for key, op, bound, what in GOALS:
        now = head.get(key)
        md.append(f"| {what} (`{key}`) | {'≥' if op == 'ge' else '≤'} {bound} | {_fmt(bh.get(key))} | "
                  f"{_fmt(now)} | "
                  f"{_yes(_met(op, now, bound))} |")
    return md + [""]


def _n(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"


def _yes(met: Optional[bool]) -> str:
    return "n/a" if met is None else "**yes**" if met else "no"


def _markdown(result: Dict[str, object]) -> List[str]:
    m = result["machine"]
    head = result["headline"]
    nb = result["neighbours"]
    src = result.get("source", {})
    tp, ov, tm = result["throughput"], result["overhead"], result["timers"]
    busiest = ", ".join(f"{k} {v:.1f} s" for k, v in list(nb["busiest"].items())[:4])
    loads = f"1-min load average {nb['loadavg_1min_min']}-{nb['loadavg_1min_max']}"
    share = nb["other_share"] or 0.0
    others = (f"**Other processes were running on this machine**: besides this benchmark and the stress-ng it "
              "starts (kernel workers included, some of them doing stress-ng's I/O) they used "
              f"{share:.0%} of its CPU time over the run, more than a tenth of it in {nb['intervals_over_10pct']} of "
              f"{nb['samples']} intervals between runs (busiest: {busiest}; {loads}). Expect noise, worst in the "
              "p99s and in the 2-thread throughput cells, which need both CPUs."
              if share >= 0.02 or nb["intervals_over_10pct"] else
              f"The machine was otherwise quiet: other processes used {share:.0%} of its CPU time over the run "
              f"({loads}).")
    md = ["# scale: data-path scaling, fan-out, timers and outside load", "",
          f"Command: `{result['command']}` on {machine_line(m)}, commit "
          f"{src.get('commit', '?')[:12]}{' with local changes' if src.get('dirty') else ''}; took "
          f"{result['elapsed_s']:.0f} s. {others}", "",
          "## Goals", "",
          "| | goal | measured | met |", "|---|---|---:|---|"]
    for key, op, bound, what in GOALS:
        v = head.get(key)
        md.append(f"| {what} (`{key}`) | {'≥' if op == 'ge' else '≤'} {bound} | {_fmt(v)} | "
                  f"{_yes(_met(op, v, bound))} |")
    md += [""] + _before_after(head, result["quick"])

    md += ["## Data path: messages/s with 1 and 2 threads", "",
           f"Each thread, pinned to its own CPU (thread i on CPU i), publishes to its own topic and at once takes "
           f"the message back from its own subscription (`takt_publish` then `takt_take_next`; no executor, no "
           f"callback; one node, topic (4 slots) and subscription (depth 1) per thread, all in one context) for "
           f"{tp['duration_ms']} ms per run, all threads starting at one instant. memcpy: the same two copies "
           f"(into a slot, out of it) without takt, the floor. {_n(tp['blocks'], 'block')}, every cell once per "
           "block in "
           f"alternating order. Threads at SCHED_FIFO {THROUGHPUT_PRIO}, and again at SCHED_OTHER for takt. The "
           f"per-message time is a batch of {tp['batch']} messages' duration / {tp['batch']}: its tail shows the "
           "waits. messages/s: sum over the threads of messages / own elapsed time. A run in which a thread "
           f"started later than a tenth of the window is repeated (up to {RETRIES} tries) and counted as discarded; a "
           "block whose every try started late has no run of that cell and is counted as missed (n/a: a cell "
           "without a run).",
           "",
           "| size | op | policy | threads | messages/s | per run min-max | runs (discarded) | errors | batches | "
           "min ns | p50 ns | p90 ns | p99 ns | p99.9 ns | max ns |",
           "|---:|---|---|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in tp["rows"]:
        d = r["ns_per_msg"]
        pol = f"FIFO {r['priority']}" if r["priority"] else "OTHER"
        per = [v for v in r["msgs_per_s_per_run"] if v is not None]
        rate = "n/a" if r["msgs_per_s"] is None else f"{r['msgs_per_s']:,.0f}"
        missed = f"; {r['runs_missed']} missed" if r.get("runs_missed") else ""
        md.append(f"| {size_label(r['size'])} | {r['op']} | {pol} | {r['threads']} | {rate} | "
                  f"{f'{min(per):,.0f}-{max(per):,.0f}' if per else 'n/a'} | "
                  f"{r['runs']} ({r['runs_discarded']}{missed}) | {r['errors']} | {d['count']} | " +
                  " | ".join(f"{d[k]:.0f}" if d["count"] else "n/a"
                             for k in ("min", "p50", "p90", "p99", "p999", "max")) + " |")
    md += ["", "| size | policy | takt 2 / 1 threads | block by block min / median / max | memcpy 2 / 1 (floor) |",
           "|---:|---|---:|---|---:|"]
    for size in SIZES:
        for prio in (THROUGHPUT_PRIO, 0):
            ratio, blocks = _scaling(tp["rows"], "takt", size, prio)
            floor = _scaling(tp["rows"], "memcpy", size)[0] if prio else None
            spread = (f"{min(blocks):.3f} / {statistics.median(blocks):.3f} / {max(blocks):.3f}" if blocks
                      else "n/a")
            md.append(f"| {size_label(size)} | {'FIFO ' + str(prio) if prio else 'OTHER'} | {_fmt(ratio)} | "
                      f"{spread} | "
                      f"{_fmt(floor) if prio else ''} |")

    md += ["", "## publish -> callback start: fan-out and I/O load", "",
           f"`takt-bench-rosrt overhead EXEC SCENARIO {ov['count_per_run']} {ov['period_us']} local` (rosrt's "
           f"one-process scenarios): a message carries the time just before `takt_publish`, every subscription's "
           f"callback records its start minus that time. Publisher every {ov['period_us']} µs at SCHED_FIFO "
           f"{PUB_PRIO}, callbacks at {CB_PRIO} (preempt: the callback's priority on its worker, default pool, timer "
           f"thread at 98; waitset multi-threaded: one thread per CPU, 10 threads for the fan-out, at {CB_PRIO}). "
           f"{_n(ov['blocks'], 'block')} x {ov['count_per_run']} publications per cell; in each block every cell runs "
           "without load, then again with `stress-ng " + " ".join(STRESS_ARGS) + "` beside at SCHED_OTHER "
           f"(started for the loaded half of each block with `--timeout {ov['stress_timeout_s']}s` and files in a "
           "temporary directory on the root disk, stopped after it), executor order alternating by block. "
           "Fan-out: every callback of the 10 is a sample. > 1 ms: samples later than 1 ms (stalls); where they "
           "are near 1 % of a cell, its p99 sits on the knee of that tail and moves a lot from run to run.", "",
           "| stress-ng | scenario | executor | received | min µs | p50 µs | p90 µs | p99 µs | p99.9 µs | "
           "max µs | > 1 ms | p99 preempt / waitset |",
           "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for loaded in (False, True):
        for scen in SCENARIOS:
            for ex in EXECS:
                r = _ov(ov["rows"], loaded, scen, ex)
                key = f"{'io_load' if loaded else 'no_load'}_{scen}_p99_preempt_over_waitset"
                present = "" if not loaded or r["stress_present_throughout"] else " (load ended early)"
                md.append(f"| {'yes' + present if loaded else 'no'} | {SCENARIO_LABEL[scen]} | "
                          f"{'preempt' if ex == 'preempt' else 'waitset multi-threaded'} | "
                          f"{r['received']}/{r['expected']} | " +
                          " | ".join(_us(r, k) for k in ("min", "p50", "p90", "p99", "p999", "max")) +
                          f" | {r.get('over_1ms', 'n/a')} | {_fmt(head.get(key)) if ex == 'preempt' else ''} |")

    md += ["", f"The floor, run in the same halves of each block: `cyclictest -m -p {CB_PRIO} -i {ov['period_us']}` "
           "(a SCHED_FIFO thread with locked memory waking at absolute times; its wake-up latency, µs, wake-ups "
           "beyond 20 ms counted as 20 ms), and the CPU time the hypervisor took from this virtual machine while it "
           "ran (`steal` in /proc/stat, as a share of both CPUs' time). No executor can be faster than this floor: "
           "where the floor's own p99 lies in its > 1 ms tail, so do both executors' and their ratio says nothing "
           "of scheduling.", "",
           "| stress-ng | received | min µs | p50 µs | p90 µs | p99 µs | p99.9 µs | max µs | > 1 ms | stolen |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for f in ov.get("floor", []):
        stolen = "n/a" if f.get("steal_fraction") is None else f"{100.0 * f['steal_fraction']:.1f} %"
        md.append(f"| {'yes' if f['stress'] else 'no'} | {f['received']}/{f['expected']} | " +
                  " | ".join(_us(f, k) for k in ("min", "p50", "p90", "p99", "p999", "max")) +
                  f" | {f['over_1ms']} | {stolen} |")
    md += ["", "## Timer jitter: preempt's default timers vs a raw thread", "",
           "Jitter: start of release k minus start of release k-1 minus the period (`takt-bench-rosrt timer EXEC "
           "PERIOD_US COUNT 1`). preempt: its default timer mode (`TAKT_TIMERS_DEDICATED`), a thread for the "
           f"timer sleeping until each absolute release at the callback's priority {CB_PRIO} and running it itself; "
           f"raw: one SCHED_FIFO {CB_PRIO} thread "
           "sleeping until absolute times with clock_nanosleep (the floor). Every period of rosrt's sweep, "
           f"{_n(tm['blocks'], 'interleaved block')} per period; no other load. Distribution of the absolute jitter in "
           "µs, and the signed p1 / mean / p99.", "",
           "| period µs | executor | samples | min | p50 | p90 | p99 | p99.9 | max | signed p1 / mean / p99 | "
           "p99 preempt / raw |",
           "|---:|---|---:|---:|---:|---:|---:|---:|---:|---|---:|"]
    for r in tm["rows"]:
        d = r["abs"]
        key = f"timer_{r['period_us']}us_p99_jitter_preempt_over_raw"
        md.append(f"| {r['period_us']} | {'preempt' if r['executor'] == 'preempt' else 'raw clock_nanosleep'} | "
                  f"{d['count']} | " + " | ".join(_us(d, k) for k in ("min", "p50", "p90", "p99", "p999", "max")) +
                  f" | {r['signed_p1'] / 1e3:.1f} / {r['signed_mean'] / 1e3:.1f} / {r['signed_p99'] / 1e3:.1f} | "
                  f"{_fmt(head.get(key)) if r['executor'] == 'preempt' else ''} |")
    md += ["", "Samples per cell: ≥ 1000 in the full run; `--quick` runs a few of each and its figures are smoke "
           "figures only.", ""]
    return md


def run(quick: bool, out: Path) -> int:
    started = time.monotonic()
    scale_exe = native.program(PROGRAM)
    rosrt_exe = native.program(ROSRT)
    load = Neighbours()
    result: Dict[str, object] = {"benchmark": NAME, "command": command(NAME, quick), "machine": machine(),
                                 "quick": quick, "source": git_commit(native.repo_root()),
                                 "stress_ng": " ".join(["stress-ng"] + STRESS_ARGS) if stress_ng_path() else None}
    result["throughput"] = _throughput(scale_exe, quick, load)
    with tempfile.TemporaryDirectory(prefix="takt-scale-") as tmp:
        result["overhead"] = _overhead(rosrt_exe, quick, Path(tmp), load)
    result["timers"] = _timers(rosrt_exe, quick, load)
    load.sample()
    result["neighbours"] = load.summary()
    result["elapsed_s"] = round(time.monotonic() - started, 1)
    result["headline"] = _headline(result)
    result["goals"] = {key: {"bound": f"{'>=' if op == 'ge' else '<='} {bound}", "value": result["headline"].get(key),
                             "met": _met(op, result["headline"].get(key), bound)} for key, op, bound, _ in GOALS}
    write_json(out, NAME, result)
    write_markdown(out, NAME, _markdown(result))
    errors = sum(r["errors"] for r in result["throughput"]["rows"])
    return 0 if errors == 0 else 1
