"""`takt bench rosrt`: ROS^RT's experiments (§V) on takt's executors, with their floors.

Four parts, each interleaved executor by executor in one invocation:
  overhead  publish -> callback start: one process and two processes over a UDP link and over
            a shared-memory topic (takt/shm.h, routed in and out of local topics); one
            subscription, plus 100 subscriptions nobody publishes to, and 10 subscriptions to one
            topic; preempt, tide, waitset single- and multi-threaded (rclcpp, the baseline).
  timers    start-to-start jitter at 100 us .. 100 ms beside cyclictest (same period and priority)
            and a raw clock_nanosleep thread (the floor); ten 10 ms timers at once.
  dispatch  release-to-start on an idle preempt worker vs a raw futex wake-up between two threads.
  graph     the sensor-fusion graph (examples/sensor_fusion.yaml) on this machine's CPUs: hot-path
            latency under rate-monotonic FP, hot path highest, EDF, and the waitset baseline, with
            and without a stress-ng load at lower priority.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import tempfile
from pathlib import Path
from typing import Dict, List, Tuple

from takt import native
from takt.bench.common import command, cyclictest, distribution, machine, pyplot, run_native, stress_ng, \
    stress_ng_path, us, write_json, write_markdown

NAME = "rosrt"
PROGRAM = "bench/takt-bench-rosrt"
EXECS = ["preempt", "tide", "waitset1", "waitset"]
EXEC_LABEL = {"preempt": "preempt", "preempt-leader": "preempt, leader timers", "tide": "tide",
              "waitset1": "waitset single-threaded",
              "waitset": "waitset multi-threaded", "raw": "raw clock_nanosleep thread"}
CB_PRIO = 60  # the benchmark program's callback priority (bench_rosrt.c)
PUB_PRIO = 50  # and its publishers'
SCENARIOS = ["single", "dummy100", "fanout10"]
TRANSPORTS = ["local", "udp", "shm"]
TRANSPORT_LABEL = {"local": "one process", "udp": "two processes (UDP)", "shm": "two processes (shared memory)"}
# (period µs, samples) of the timer sweep: about 1-6 s per executor and period in the full run
TIMER_PLAN = [(100, 5000), (500, 2000), (1000, 2000), (10000, 500), (50000, 100), (100000, 60)]
TIMER_PLAN_QUICK = [(100, 200), (500, 100), (1000, 100), (10000, 10), (50000, 3), (100000, 2)]


def overhead_samples(exe: Path, executor: str, scenario: str, count: int, period_us: int,
                     transport: str = "local") -> Tuple[List[float], int]:
    """One run of the program's publish -> callback scenario: (latencies in ns, samples expected)."""
    r = run_native(exe, ["overhead", executor, scenario, str(count), str(period_us), transport])
    return r["samples_ns"], r["expected"]


def timer_jitter(exe: Path, executor: str, period_us: int, count: int, timers: int = 1) -> List[float]:
    """One run of the program's timer scenario: start-to-start minus the period, in ns
    (executor "raw": a clock_nanosleep thread per timer)."""
    return run_native(exe, ["timer", executor, str(period_us), str(count), str(timers)])["jitter_ns"]


def _overhead(exe: Path, quick: bool) -> Dict[str, object]:
    count, period_us, blocks = (60, 2000, 1) if quick else (1500, 2000, 2)
    samples: Dict[str, List[float]] = {}
    expected: Dict[str, int] = {}
    for _ in range(blocks):
        for transport in TRANSPORTS:
            for scen in SCENARIOS:
                for ex in EXECS:  # interleaved: every executor once per block and scenario
                    got, want = overhead_samples(exe, ex, scen, count, period_us, transport)
                    key = f"{transport}/{scen}/{ex}"
                    samples.setdefault(key, []).extend(got)
                    expected[key] = expected.get(key, 0) + want
    rows = []
    for key, v in samples.items():
        transport, scen, ex = key.split("/")
        rows.append({"transport": transport, "scenario": scen, "executor": ex, "expected": expected[key],
                     "received": len(v), **distribution(v)})
    return {"count_per_block": count, "period_us": period_us, "blocks": blocks, "rows": rows}


def _timers(exe: Path, quick: bool) -> Dict[str, object]:
    plan = TIMER_PLAN_QUICK if quick else TIMER_PLAN
    rows = []
    for period, count in plan:
        for ex in ["raw", "preempt", "preempt-leader", "tide", "waitset1", "waitset"]:
            rows.append({"period_us": period, "executor": ex, "timers": 1,
                         **distribution(timer_jitter(exe, ex, period, count))})
        rows.append({"period_us": period, "executor": "cyclictest", "timers": 1,
                     **distribution(cyclictest(count, CB_PRIO, period))})
    many = 30 if quick else 300
    for ex in ("raw", "preempt", "preempt-leader", "waitset"):
        rows.append({"period_us": 10000, "executor": ex, "timers": 10,
                     **distribution(timer_jitter(exe, ex, 10000, many, 10))})
    return {"rows": rows}


def _dispatch(exe: Path, quick: bool) -> Dict[str, object]:
    r = run_native(exe, ["dispatch", "100" if quick else "3000"])
    return {"preempt": distribution(r["preempt_ns"]), "futex": distribution(r["futex_ns"])}


GRAPH_VARIANTS = [
    # (name, executor, scheduling, hot-path priority): rate-monotonic as written in the file
    ("preempt FP rate-monotonic", "preempt", "fp", None),
    ("preempt FP hot path highest", "preempt", "fp", 70),
    ("preempt EDF", "preempt", "edf", None),
    ("waitset multi-threaded", "waitset", "fp", None),
]


def _graph(quick: bool) -> Dict[str, object]:
    runner = native.program("tools/takt-run")
    src = native.repo_root() / "examples" / "sensor_fusion.yaml"
    text = src.read_text()
    duration = 1.0 if quick else 15.0
    stress = stress_ng_path()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for load in (False, True):
            for name, ex, sched, hot in GRAPH_VARIANTS:
                body = text.replace("scheduling: fp", f"scheduling: {sched}")
                if hot is not None:  # the hot path's callbacks are those at priority 40
                    body = body.replace("priority: 40", f"priority: {hot}")
                path = Path(tmp) / "graph.yaml"
                path.write_text(body)
                out = Path(tmp) / "graph.json"
                # stress-ng at SCHED_OTHER: lower than every SCHED_FIFO thread of the graph
                with stress_ng(["--cpu", "0"], int(duration) + 2) if load else contextlib.nullcontext():
                    proc = subprocess.run([str(runner), str(path), "--executor", ex, "--duration", str(duration),
                                           "--quiet", "--json", str(out)], capture_output=True, text=True)
                if proc.returncode != 0:
                    raise RuntimeError(f"takt-run {name}: {proc.stderr.strip()}")
                res = json.loads(out.read_text())
                hot_chain = next(c for c in res["chains"] if c["name"] == "hot_path")
                rows.append({"variant": name, "executor": ex, "scheduling": sched,
                             "stress": bool(load and stress), "sched_fifo": res.get("sched_fifo"),
                             **{k: hot_chain[k] for k in ("count", "min_ns", "mean_ns", "p50_ns", "p90_ns",
                                                          "p99_ns", "max_ns", "deadline_misses")}})
    return {"duration_s": duration, "stress_ng": stress is not None, "rows": rows}


def _plot(result: Dict[str, object], path: Path) -> None:
    plt = pyplot()
    if plt is None:
        return
    rows = result["overhead"]["rows"]
    fig, axes = plt.subplots(1, len(TRANSPORTS), figsize=(16, 4), sharey=False)
    for ax, transport in zip(axes, TRANSPORTS):
        scens = SCENARIOS
        width = 0.2
        for i, ex in enumerate(EXECS):
            p50 = [next(r["p50"] for r in rows if r["transport"] == transport and r["scenario"] == s
                        and r["executor"] == ex) / 1e3 for s in scens]
            p99 = [next(r["p99"] for r in rows if r["transport"] == transport and r["scenario"] == s
                        and r["executor"] == ex) / 1e3 for s in scens]
            xs = [k + (i - 1.5) * width for k in range(len(scens))]
            ax.bar(xs, p99, width, label=f"{EXEC_LABEL[ex]} p99", alpha=0.45)
            ax.scatter(xs, p50, marker="_", s=120, color="black")
        ax.set_xticks(range(len(scens)))
        ax.set_xticklabels(["1 subscription", "+100 idle subscriptions", "10 subscriptions"])
        ax.set_title(TRANSPORT_LABEL[transport])
        ax.set_ylabel("publish -> callback start (µs); bar p99, tick p50")
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def run(quick: bool, out: Path) -> int:
    exe = native.program(PROGRAM)
    result: Dict[str, object] = {"benchmark": NAME, "command": command(NAME, quick),
                                 "machine": machine(), "quick": quick,
                                 # EDF backend: sched_ext would be offered only where it can be tested
                                 "sched_ext": Path("/sys/kernel/sched_ext").exists()}
    result["overhead"] = _overhead(exe, quick)
    result["timers"] = _timers(exe, quick)
    result["dispatch"] = _dispatch(exe, quick)
    result["graph"] = _graph(quick)

    ov = result["overhead"]["rows"]
    get = lambda t, s, e: next(r for r in ov if r["transport"] == t and r["scenario"] == s and r["executor"] == e)
    head: Dict[str, object] = {}
    for t in TRANSPORTS:
        for s in SCENARIOS:
            pre = get(t, s, "preempt")
            for base in ("waitset1", "waitset"):
                head[f"{t}_{s}_p99_preempt_over_{base}"] = round(pre["p99"] / max(get(t, s, base)["p99"], 1.0), 2)
            head[f"{t}_{s}_p99_preempt_us"] = round(pre["p99"] / 1e3, 1)
    tm = result["timers"]["rows"]
    for r in tm:
        if r["executor"] in ("preempt", "preempt-leader", "waitset") and r["timers"] == 1:
            floor = next(x for x in tm if x["period_us"] == r["period_us"] and x["executor"] == "raw")
            head[f"timer_{r['period_us']}us_p99_abs_jitter_{r['executor'].replace('-', '_')}_over_raw"] = round(
                max(abs(r["p1"]), abs(r["p99"])) / max(abs(floor["p1"]), abs(floor["p99"]), 1.0), 2)
    d = result["dispatch"]
    head["dispatch_p50_preempt_over_futex"] = round(d["preempt"]["p50"] / max(d["futex"]["p50"], 1.0), 2)
    head["dispatch_p50_above_futex_us"] = round((d["preempt"]["p50"] - d["futex"]["p50"]) / 1e3, 1)
    gr = result["graph"]["rows"]
    for load in (False, True):
        base = next((r for r in gr if r["executor"] == "waitset" and r["stress"] == load), None)
        for r in gr:
            if r["stress"] == load and r["executor"] == "preempt" and base:
                key = r["variant"].replace("preempt ", "").replace(" ", "_").replace("-", "_")
                head[f"graph_{'stress_' if load else ''}{key}_p99_over_waitset"] = round(
                    r["p99_ns"] / max(base["p99_ns"], 1), 2)
    result["headline"] = head

    write_json(out, NAME, result)
    _plot(result, out / "rosrt.png")
    m = result["machine"]
    md = ["# rosrt: ROS^RT's experiments on takt", "",
          f"Command: `{result['command']}` on {m['cpus']} CPUs ({m['cpu_model']}, kernel {m['kernel']}). "
          f"Callbacks at SCHED_FIFO {CB_PRIO} (preempt: the callback's priority on its worker; tide and waitset: "
          "the executor threads), publishers at 50, the preempt timer thread at 98. Executors interleaved in each "
          "block; waitset reproduces rclcpp (single-threaded, and multi-threaded with one thread per CPU), the "
          "baseline. ROS^RT's own figures, for scale: p99 47 µs vs 61/55 µs (multi/single-threaded), 10 "
          "subscriptions 69 µs vs 174/104 µs, two processes over DDS on a 16-core machine. EDF runs on SCHED_FIFO "
          f"levels; sched_ext on this kernel: {'present' if result['sched_ext'] else 'absent'}.", "",
          "## publish -> callback start", "",
          f"{result['overhead']['blocks']} blocks x {result['overhead']['count_per_block']} publications every "
          f"{result['overhead']['period_us']} µs. two processes: the publisher is a child process whose bridge "
          "exports the topic over `udp:` on loopback (one frame per datagram); the subscriber's bridge imports it. "
          "shared memory: the child's topic is routed out to a shared-memory topic (`takt_shm_route_out`: the copy "
          "runs in the publishing thread) and into the subscriber's local topic (`takt_shm_route_in`: tide takes the arrivals itself "
          "as an executor source, the others from the segment's receive thread at SCHED_FIFO 90). "
          "fanout10: tide and single-threaded waitset get one executor (one thread) per subscription, as ROS^RT "
          "did for its single-threaded executors; preempt uses its default pool (2 workers per CPU).", "",
          "| transport | scenario | executor | received | min µs | p50 µs | p90 µs | p99 µs | max µs | p99 / waitset-multi |",
          "|---|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for t in TRANSPORTS:
        for s in SCENARIOS:
            base = get(t, s, "waitset")
            for ex in EXECS:
                r = get(t, s, ex)
                md.append(f"| {TRANSPORT_LABEL[t]} | {s} | {EXEC_LABEL[ex]} | "
                          f"{r['received']}/{r['expected']} | {us(r, 'min')} | {us(r, 'p50')} | {us(r, 'p90')} | "
                          f"{us(r, 'p99')} | {us(r, 'max')} | {r['p99'] / max(base['p99'], 1.0):.2f} |")
    md += ["", "## timer jitter (start-to-start minus the period)", "",
           "Like ROS^RT's Table III: p1, mean, p99 of the jitter. raw: a SCHED_FIFO thread sleeping until absolute "
           "times (the floor for jitter); cyclictest: wake-up latency at the same period and priority (the OS floor "
           "for lateness; not a jitter, shown beside). preempt: its default timers, a thread per timer "
           "(`TAKT_TIMERS_DEDICATED`) sleeping until each release at the job's priority and running the job itself "
           "(timers beyond `timer_threads` on the timer thread at SCHED_FIFO 98, which hands each release to a "
           "worker); preempt, leader timers: a waiting worker releases and runs the job itself "
           "(`TAKT_TIMERS_LEADER`).", "",
           "| period µs | timers | executor | samples | p1 µs | mean µs | p99 µs | max µs |", "|---:|---:|---|---:|---:|---:|---:|---:|"]
    for r in tm:
        label = EXEC_LABEL.get(r["executor"], "cyclictest wake-up latency")
        if r.get("count"):
            md.append(f"| {r['period_us']} | {r['timers']} | {label} | {r['count']} | {r['p1'] / 1e3:.1f} | "
                      f"{r['mean'] / 1e3:.1f} | {r['p99'] / 1e3:.1f} | {r['max'] / 1e3:.1f} |")
        else:
            md.append(f"| {r['period_us']} | {r['timers']} | {label} | 0 (not installed) | | | | |")
    md += ["", "## dispatch: release to start on an idle worker vs a futex wake-up", "",
           "| | samples | min µs | p50 µs | p99 µs | max µs |", "|---|---:|---:|---:|---:|---:|"]
    for name, dd in (("preempt: publish -> callback on an idle worker", d["preempt"]),
                     ("raw futex wake-up between two threads (floor)", d["futex"])):
        md.append(f"| {name} | {dd['count']} | {us(dd, 'min')} | {us(dd, 'p50')} | {us(dd, 'p99')} | {us(dd, 'max')} |")
    md += ["", f"preempt / floor at p50: {head['dispatch_p50_preempt_over_futex']}x "
           f"({head['dispatch_p50_above_futex_us']} µs above).", "",
           "## sensor-fusion graph: hot-path latency", "",
           f"`examples/sensor_fusion.yaml` ({result['graph']['duration_s']} s per variant): two lidars (50 ms) fused, "
           "crop, transform, collision check; an IMU at 10 ms (1.5 ms work) above the hot path under rate-monotonic "
           "priorities; planner (cyclic, 100 ms), map loader (600 ms, 15 ms work), logger. Hot-path latency: front "
           "lidar release to the end of the collision check. stress-ng: `--cpu 0` (one worker per CPU) at "
           "SCHED_OTHER, below every SCHED_FIFO thread.", "",
           "| variant | stress-ng | count | p50 ms | p90 ms | p99 ms | max ms | p99 / waitset |", "|---|---|---:|---:|---:|---:|---:|---:|"]
    for load in (False, True):
        base = next((r for r in gr if r["executor"] == "waitset" and r["stress"] == load), None)
        for r in gr:
            if r["stress"] != load:
                continue
            md.append(f"| {r['variant']} | {'yes' if load else 'no'} | {r['count']} | {r['p50_ns'] / 1e6:.2f} | "
                      f"{r['p90_ns'] / 1e6:.2f} | {r['p99_ns'] / 1e6:.2f} | {r['max_ns'] / 1e6:.2f} | "
                      f"{r['p99_ns'] / max(base['p99_ns'], 1) if base else float('nan'):.2f} |")
    md += ["", "![overhead](rosrt.png)", ""]
    write_markdown(out, NAME, md)
    return 0
