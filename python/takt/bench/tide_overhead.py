"""`takt bench tide_overhead`: cost of one executor round, tide (O(log n)) vs batch (a scan),
from 10 to 10,000 registered entities."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Dict, List, Optional

from takt import native
from takt.bench.common import BenchFailed, command, machine, pyplot, run_native, slope, write_json, write_markdown

NAME = "tide_overhead"
OPS = ("empty_round", "timer_dispatch", "message_dispatch")


def run(quick: bool, out: Path) -> int:
    exe = native.program("bench/takt-bench-tide-overhead")
    try:
        raw = run_native(exe, ["--quick"] if quick else [])
    except BenchFailed as e:
        print(f"takt bench: {e}", file=sys.stderr)
        return 1
    rows: List[dict] = raw["rows"]
    sizes = sorted({r["entities"] for r in rows})
    lo, hi = sizes[0], sizes[-1]

    def p50(executor: str, op: str, n: int) -> float:
        for r in rows:
            if r["executor"] == executor and r["op"] == op and r["entities"] == n:
                return float(r["p50_ns"])
        return float("nan")

    headline: Dict[str, object] = {"entities_min": lo, "entities_max": hi}
    for op in OPS:
        for ex in ("tide", "batch"):
            a, b = p50(ex, op, lo), p50(ex, op, hi)
            headline[f"{ex}_{op}_p50_ns_at_min"] = a
            headline[f"{ex}_{op}_p50_ns_at_max"] = b
            headline[f"{ex}_{op}_growth"] = round(b / a, 2)
            headline[f"{ex}_{op}_exponent"] = round(slope(lo, a, hi, b), 3)
        headline[f"batch_over_tide_{op}_at_max"] = round(p50("batch", op, hi) / p50("tide", op, hi), 1)
    # O(log n) from 10 to 10,000 entities grows by log(10000)/log(10) = 4x at most; a scan grows 1000x.
    tide_exps = [headline[f"tide_{op}_exponent"] for op in OPS]
    batch_exps = [headline[f"batch_{op}_exponent"] for op in OPS]
    headline["tide_max_exponent"] = max(tide_exps)
    headline["batch_min_exponent"] = min(batch_exps)
    headline["tide_flat"] = bool(max(tide_exps) < 0.2)
    headline["batch_grows"] = bool(min(batch_exps) > 0.5)

    m = machine()
    result = {"benchmark": NAME, "command": command(NAME, quick),
              "machine": m, "quick": quick, "method": raw["clock"],
              "failed_rounds": raw["failed_rounds"], "headline": headline, "rows": rows}
    json_path = write_json(out, NAME, result)

    md = [f"# tide_overhead", "",
          f"Command: `{result['command']}` on {m['cpus']} CPUs ({m['cpu_model']}, "
          f"kernel {m['kernel']}). Cost of one executor round, measured with CLOCK_MONOTONIC; "
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
    for op in OPS:
        md.append(f"| {op} | {headline[f'tide_{op}_growth']}x | {headline[f'tide_{op}_exponent']} | "
                  f"{headline[f'batch_{op}_growth']}x | {headline[f'batch_{op}_exponent']} | "
                  f"{headline[f'batch_over_tide_{op}_at_max']}x |")
    md += ["", "Exponent: growth on a log-log scale (0 = flat, 1 = linear in the number of entities). "
           f"tide flat (exponent < 0.2): **{headline['tide_flat']}**; batch grows (exponent > 0.5): "
           f"**{headline['batch_grows']}**.", ""]
    png = _plot(rows, out / "tide_overhead.png")
    if png:
        md += [f"![per-round cost]({png.name})", ""]
    md_path = write_markdown(out, NAME, md)
    print(f"wrote {json_path} and {md_path}")
    return 0 if raw["failed_rounds"] == 0 else 1


def _plot(rows: List[dict], path: Path) -> Optional[Path]:
    plt = pyplot()
    if plt is None:
        return None
    fig, axes = plt.subplots(1, 3, figsize=(13, 4), sharey=True)
    for ax, op in zip(axes, OPS):
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
