"""`takt bench NAME`: run a native benchmark, write NAME.json (raw rows + headline) and NAME.md."""

from __future__ import annotations

import json
import math
import os
import platform
import subprocess
import sys
from pathlib import Path
from typing import Callable, Dict, List

from takt import native

NAMES = ["tide_overhead", "urt", "detection", "serialize", "pods", "rosrt"]


def machine() -> Dict[str, object]:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"cpus": os.cpu_count(), "cpu_model": model, "kernel": platform.release(),
            "python": platform.python_version()}


def _slope(x0: float, y0: float, x1: float, y1: float) -> float:
    """Growth exponent between two points on a log-log plot (0 = flat, 1 = linear)."""
    if min(x0, y0, x1, y1) <= 0 or x0 == x1:
        return float("nan")
    return math.log(y1 / y0) / math.log(x1 / x0)


def tide_overhead(quick: bool, out: Path) -> int:
    exe = native.program("bench/takt-bench-tide-overhead")
    cmd = [str(exe)] + (["--quick"] if quick else [])
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
        print(f"takt bench: {exe.name} failed (exit {proc.returncode})", file=sys.stderr)
        return 1
    raw = json.loads(proc.stdout)
    rows: List[dict] = raw["rows"]
    sizes = sorted({r["entities"] for r in rows})
    lo, hi = sizes[0], sizes[-1]

    def p50(executor: str, op: str, n: int) -> float:
        for r in rows:
            if r["executor"] == executor and r["op"] == op and r["entities"] == n:
                return float(r["p50_ns"])
        return float("nan")

    headline: Dict[str, object] = {"entities_min": lo, "entities_max": hi}
    for op in ("empty_round", "timer_dispatch", "message_dispatch"):
        for ex in ("tide", "batch"):
            a, b = p50(ex, op, lo), p50(ex, op, hi)
            headline[f"{ex}_{op}_p50_ns_at_min"] = a
            headline[f"{ex}_{op}_p50_ns_at_max"] = b
            headline[f"{ex}_{op}_growth"] = round(b / a, 2)
            headline[f"{ex}_{op}_exponent"] = round(_slope(lo, a, hi, b), 3)
        headline[f"batch_over_tide_{op}_at_max"] = round(p50("batch", op, hi) / p50("tide", op, hi), 1)
    # O(log n) from 10 to 10,000 entities grows by log(10000)/log(10) = 4x at most; a scan grows 1000x.
    tide_exps = [headline[f"tide_{op}_exponent"] for op in ("empty_round", "timer_dispatch", "message_dispatch")]
    batch_exps = [headline[f"batch_{op}_exponent"] for op in ("empty_round", "timer_dispatch", "message_dispatch")]
    headline["tide_max_exponent"] = max(tide_exps)
    headline["batch_min_exponent"] = min(batch_exps)
    headline["tide_flat"] = bool(max(tide_exps) < 0.2)
    headline["batch_grows"] = bool(min(batch_exps) > 0.5)

    result = {"benchmark": "tide_overhead", "command": "takt bench tide_overhead" + (" --quick" if quick else ""),
              "machine": machine(), "quick": quick, "method": raw["clock"],
              "failed_rounds": raw["failed_rounds"], "headline": headline, "rows": rows}
    out.mkdir(parents=True, exist_ok=True)
    (out / "tide_overhead.json").write_text(json.dumps(result, indent=2) + "\n")

    md = [f"# tide_overhead", "",
          f"Command: `{result['command']}` on {machine()['cpus']} CPUs ({machine()['cpu_model']}, "
          f"kernel {machine()['kernel']}). Cost of one executor round, measured with CLOCK_MONOTONIC; "
          "readiness driven by a fake clock (exactly one timer release or one message per round). "
          "`tide` and `batch` interleaved in the same run; no SCHED_FIFO, no other load.", "",
          "| entities | executor | operation | count | min ns | p50 ns | p90 ns | p99 ns | p99.9 ns | max ns |",
          "|---:|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in sorted(rows, key=lambda r: (r["op"], r["entities"], r["executor"])):
        md.append(f"| {r['entities']} | {r['executor']} | {r['op']} | {r['count']} | {r['min_ns']} | "
                  f"{r['p50_ns']} | {r['p90_ns']} | {r['p99_ns']} | {r['p999_ns']} | {r['max_ns']} |")
    md += ["", f"## Headline (p50, {lo} → {hi} entities)", "",
           "| operation | tide growth | tide exponent | batch growth | batch exponent | batch / tide at max |",
           "|---|---:|---:|---:|---:|---:|"]
    for op in ("empty_round", "timer_dispatch", "message_dispatch"):
        md.append(f"| {op} | {headline[f'tide_{op}_growth']}x | {headline[f'tide_{op}_exponent']} | "
                  f"{headline[f'batch_{op}_growth']}x | {headline[f'batch_{op}_exponent']} | "
                  f"{headline[f'batch_over_tide_{op}_at_max']}x |")
    md += ["", "Exponent: growth on a log-log scale (0 = flat, 1 = linear in the number of entities). "
           f"tide flat (exponent < 0.2): **{headline['tide_flat']}**; batch grows (exponent > 0.5): "
           f"**{headline['batch_grows']}**.", ""]
    png = _plot(rows, out / "tide_overhead.png")
    if png:
        md += [f"![per-round cost]({png.name})", ""]
    (out / "tide_overhead.md").write_text("\n".join(md))
    print("\n".join(md))
    print(f"wrote {out / 'tide_overhead.json'} and {out / 'tide_overhead.md'}")
    return 0 if raw["failed_rounds"] == 0 else 1


def _plot(rows: List[dict], path: Path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    fig, axes = plt.subplots(1, 3, figsize=(13, 4), sharey=True)
    for ax, op in zip(axes, ("empty_round", "timer_dispatch", "message_dispatch")):
        for ex, style, color in (("tide", "o-", "C0"), ("batch", "s--", "C3")):
            pts = sorted((r["entities"], r["p50_ns"], r["p99_ns"]) for r in rows
                         if r["op"] == op and r["executor"] == ex)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], style, color=color, label=f"{ex} p50")
            ax.plot([p[0] for p in pts], [p[2] for p in pts], style, color=color, alpha=0.35,
                    label=f"{ex} p99")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(op)
        ax.set_xlabel("registered entities")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("ns per round")
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def _fit_line(xs: List[float], ys: List[float]):
    """Least squares y = a + b x; returns (a, b, r2)."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    b = sxy / sxx if sxx else 0.0
    a = my - b * mx
    ss_tot = sum((y - my) ** 2 for y in ys)
    ss_res = sum((y - (a + b * x)) ** 2 for x, y in zip(xs, ys))
    r2 = 1.0 - ss_res / ss_tot if ss_tot else float("nan")  # no variation: a line says nothing
    return a, b, r2


def _exponent(xs: List[float], ys: List[float]) -> float:
    """Slope of log y against log x (1 = linear, 2 = quadratic)."""
    lx = [math.log(x) for x in xs]
    ly = [math.log(max(y, 1.0)) for y in ys]
    return _fit_line(lx, ly)[1]


def _run_native(exe: Path, args: List[str]) -> dict:
    proc = subprocess.run([str(exe)] + args, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
        raise RuntimeError(f"{exe.name} failed (exit {proc.returncode})")
    return json.loads(proc.stdout)


URT_SWEEPS = {
    "nodes": ("nodes triggered by one timer", "nodes", "Fig. 6A: linear"),
    "payload_pubsub": ("publish-subscribe, payload", "bytes", "Fig. 6B: linear"),
    "payload_rpc": ("RPC round trip, payload", "bytes", "Fig. 6B: linear"),
    "hops": ("communication hops (HARD)", "hops", "Fig. 7A: slightly super-linear for HARD"),
    "topics": ("topics, one HARD subscriber each", "topics", "Fig. 7A/B: slightly super-linear for HARD"),
    "hard_subscribers": ("HARD subscribers on one topic", "subscribers", "Eq. 17: quadratic"),
    "messages": ("messages in a buffer, out-of-order origin times", "messages", "linear (worst case)"),
    "hard_requests": ("HARD requests in a service queue", "requests", "Eq. 18: quadratic"),
}


def urt(quick: bool, out: Path) -> int:
    raw = _run_native(native.program("bench/takt-bench-urt"), ["--quick"] if quick else [])
    rows = raw["rows"]
    headline: Dict[str, object] = {}
    fits = []
    for sweep, (title, unit, paper) in URT_SWEEPS.items():
        pts = sorted((r["n"], r["p50_ns"], r["max_ns"]) for r in rows if r["sweep"] == sweep)
        xs = [float(p[0]) for p in pts]
        ys = [float(p[1]) for p in pts]
        a, b, r2 = _fit_line(xs, ys)
        exp = _exponent(xs, ys)
        fits.append((sweep, title, unit, paper, a, b, r2, exp, pts))
        headline[f"{sweep}_r2"] = round(r2, 4) if r2 == r2 else None
        headline[f"{sweep}_exponent"] = round(exp, 3)
        headline[f"{sweep}_ns_per_{unit}"] = round(b, 2)
    headline["hard_subscribers_linear"] = bool((headline["hard_subscribers_r2"] or 0) >= 0.98)
    headline["hard_requests_linear"] = bool((headline["hard_requests_r2"] or 0) >= 0.98)
    result = {"benchmark": "urt", "command": "takt bench urt" + (" --quick" if quick else ""),
              "machine": machine(), "quick": quick, "reps": raw["reps"], "failures": raw["failures"],
              "headline": headline, "rows": rows}
    out.mkdir(parents=True, exist_ok=True)
    (out / "urt.json").write_text(json.dumps(result, indent=2) + "\n")
    m = machine()
    md = ["# urt: µRT's scaling experiments on takt", "",
          f"Command: `{result['command']}` on {m['cpus']} CPUs ({m['cpu_model']}, kernel {m['kernel']}); "
          f"{raw['reps']} interactions per point, p50 and max of the end-to-end cost of one interaction "
          "(CLOCK_MONOTONIC, one thread, the middleware's own work). Every consumer is HARD with latency, "
          "jitter and rate constraints armed; a fake clock keeps them from firing. µRT's own figures "
          "(Cortex-M4 at 80 MHz) are not re-measured here: the comparison is the shape, which µRT's paper "
          "derives as quadratic for HARD subscribers and HARD requests (Eq. 17, 18).", "",
          "| sweep | fit: ns per unit | intercept ns | R² | growth exponent | µRT |",
          "|---|---:|---:|---:|---:|---|"]
    for sweep, title, unit, paper, a, b, r2, exp, pts in fits:
        r2s = f"{r2:.4f}" if r2 == r2 else "flat (no variation)"
        md.append(f"| {title} | {b:.1f} per {unit[:-1] if unit.endswith('s') else unit} | {a:.0f} | "
                  f"{r2s} | {exp:.2f} | {paper} |")
    md += ["", f"HARD subscribers fit a line (R² ≥ 0.98): **{headline['hard_subscribers_linear']}**; "
           f"HARD requests: **{headline['hard_requests_linear']}**.", "", "## Points (p50 / max, ns)", ""]
    for sweep, title, unit, paper, a, b, r2, exp, pts in fits:
        md.append(f"- {title}: " + ", ".join(f"{p[0]}: {p[1]}/{p[2]}" for p in pts))
    md.append("")
    png = _plot_urt(fits, out / "urt.png")
    if png:
        md += [f"![sweeps]({png.name})", ""]
    (out / "urt.md").write_text("\n".join(md))
    print("\n".join(md))
    return 0 if raw["failures"] == 0 else 1


def _plot_urt(fits, path: Path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    fig, axes = plt.subplots(2, 4, figsize=(16, 7))
    for ax, (sweep, title, unit, paper, a, b, r2, exp, pts) in zip(axes.flat, fits):
        xs = [p[0] for p in pts]
        ax.plot(xs, [p[1] / 1e3 for p in pts], "o-", color="C0", label="p50")
        ax.plot(xs, [(a + b * x) / 1e3 for x in xs], "--", color="C2",
                label=f"fit R²={r2:.3f}" if r2 == r2 else "flat")
        ax.set_title(title, fontsize=9)
        ax.set_xlabel(unit)
        ax.set_ylabel("µs")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return path


def _percentiles(v: List[float]) -> Dict[str, float]:
    v = sorted(v)
    n = len(v)
    pick = lambda q: v[min(n - 1, int(q * (n - 1) + 0.5))]
    return {"count": n, "min": v[0], "p50": pick(0.5), "p90": pick(0.9), "p99": pick(0.99),
            "p999": pick(0.999), "max": v[-1]}


def _cyclictest(count: int, prio: int, interval_us: int = 1000) -> List[float]:
    """cyclictest at SCHED_FIFO prio and an interval: wake-up latencies in ns (µs resolution)."""
    import shutil
    exe = shutil.which("cyclictest")
    if exe is None:
        return []
    proc = subprocess.run([exe, "-m", "-q", "-p", str(prio), "-i", str(interval_us), "-l", str(count), "-h", "20000"],
                          capture_output=True, text=True)
    samples: List[float] = []
    for line in proc.stdout.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0].isdigit() and parts[1].isdigit():
            samples += [float(parts[0]) * 1000.0] * int(parts[1])
    return samples


def detection(quick: bool, out: Path) -> int:
    exe = native.program("bench/takt-bench-detection")
    prio = 99
    blocks, per_block = (2, 100) if quick else (4, 2500)
    takt_ns: List[float] = []
    floor_ns: List[float] = []
    sched = False
    for _ in range(blocks):  # interleaved: takt, cyclictest, takt, cyclictest, ...
        raw = _run_native(exe, [str(per_block), str(prio)])
        takt_ns += raw["delay_ns"]
        sched = raw["sched_fifo"]
        floor_ns += _cyclictest(per_block, prio)
    t = _percentiles(takt_ns)
    headline: Dict[str, object] = {"takt_p50_us": round(t["p50"] / 1e3, 1), "takt_p99_us": round(t["p99"] / 1e3, 1),
                                   "takt_max_us": round(t["max"] / 1e3, 1), "sched_fifo": sched}
    f = _percentiles(floor_ns) if floor_ns else None
    if f:
        headline.update({"cyclictest_p50_us": round(f["p50"] / 1e3, 1), "cyclictest_p99_us": round(f["p99"] / 1e3, 1),
                         "cyclictest_max_us": round(f["max"] / 1e3, 1),
                         "p50_over_floor": round(t["p50"] / max(f["p50"], 1.0), 2),
                         "p99_over_floor": round(t["p99"] / max(f["p99"], 1.0), 2),
                         "p50_above_floor_us": round((t["p50"] - f["p50"]) / 1e3, 1)})
    result = {"benchmark": "detection", "command": "takt bench detection" + (" --quick" if quick else ""),
              "machine": machine(), "quick": quick, "priority": prio, "headline": headline,
              "takt": t, "cyclictest": f, "takt_delay_ns": takt_ns}
    out.mkdir(parents=True, exist_ok=True)
    (out / "detection.json").write_text(json.dumps(result, indent=2) + "\n")
    m = machine()
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
    (out / "detection.md").write_text("\n".join(md))
    print("\n".join(md))
    return 0


def serialize(quick: bool, out: Path) -> int:
    raw = _run_native(native.program("msgs/takt-bench-serialize"), ["--quick"] if quick else [])
    rows = raw["rows"]
    by = {(r["message"], r["op"]): r for r in rows}
    messages = list(dict.fromkeys(r["message"] for r in rows))
    headline: Dict[str, object] = {}
    m = machine()
    md = ["# serialize: generated message codecs beside memcpy", "",
          f"Command: `takt bench serialize{' --quick' if quick else ''}` on {m['cpus']} CPUs ({m['cpu_model']}, "
          f"kernel {m['kernel']}), one thread, no other load. Each repetition runs every operation once, "
          "interleaved; `memcpy` copies the same number of bytes as the ROS 1 encoding (the floor). A sample "
          "of a small message (Header, Pose...) is the mean of 100 back-to-back operations, as the clock "
          "itself costs about 20 ns a read. "
          "Throughput = encoded bytes / p50 time.", "",
          "| message | bytes | operation | p50 ns | p99 ns | MB/s at p50 | p50 / memcpy |",
          "|---|---:|---|---:|---:|---:|---:|"]
    for msg in messages:
        floor = by[(msg, "memcpy")]["p50_ns"]
        key = msg.split()[0].split("/")[1]
        for op in ("ros1_serialize", "ros1_deserialize", "cdr_serialize", "cdr_deserialize", "memcpy"):
            r = by[(msg, op)]
            mbs = r["bytes"] / max(r["p50_ns"], 1) * 1e3
            ratio = r["p50_ns"] / max(floor, 1)
            md.append(f"| {msg} | {r['bytes']} | {op} | {r['p50_ns']} | {r['p99_ns']} | {mbs:.0f} | {ratio:.2f} |")
            if op != "memcpy":
                headline[f"{key}_{op}_over_memcpy"] = round(ratio, 2)
            headline[f"{key}_{op}_mb_s"] = round(mbs)
    md.append("")
    result = {"benchmark": "serialize", "command": "takt bench serialize" + (" --quick" if quick else ""),
              "machine": m, "quick": quick, "failures": raw["failures"], "headline": headline, "rows": rows}
    out.mkdir(parents=True, exist_ok=True)
    (out / "serialize.json").write_text(json.dumps(result, indent=2) + "\n")
    (out / "serialize.md").write_text("\n".join(md))
    print("\n".join(md))
    return 0 if raw["failures"] == 0 else 1


def pods(quick: bool, out: Path) -> int:
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
            r = _run_native(exe, [variant, str(chains), str(payload), str(work), "500", str(samples),
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
    result = {"benchmark": "pods", "command": "takt bench pods" + (" --quick" if quick else ""), "machine": m,
              "quick": quick, "samples_per_point": samples, "headline": headline, "rows": rows}
    out.mkdir(parents=True, exist_ok=True)
    (out / "pods.json").write_text(json.dumps(result, indent=2) + "\n")
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
    (out / "pods.md").write_text("\n".join(md))
    print("\n".join(md))
    return 0


def rosrt(quick: bool, out: Path) -> int:
    from takt.bench_rosrt import rosrt as run_rosrt  # its own module; it uses this one's helpers
    return run_rosrt(quick, out)


RUNNERS: Dict[str, Callable[[bool, Path], int]] = {"tide_overhead": tide_overhead, "urt": urt,
                                                   "detection": detection, "serialize": serialize, "pods": pods,
                                                   "rosrt": rosrt}


def run(name: str, quick: bool, out: Path) -> int:
    return RUNNERS[name](quick, out)
