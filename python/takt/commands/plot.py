"""`takt plot FILE`: figures of a run.

- A runner result (`takt run ... ` → results/run_*.json): per chain, the cumulative distribution
  of its end-to-end latency (from the chain's histogram: buckets with a relative width below
  1/32) with its deadline, and the histogram itself.
- A trace (`takt run --trace FILE`, Perfetto): per callback, the cumulative distribution of its
  response time (release to end of each job) and of its waiting time (release to start).

Writes PNG or SVG (by the extension of --out; default: FILE with .png) with matplotlib, and prints
the figures it drew from (count, p50, p99, max per chain or callback)."""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Dict, List, Sequence, Tuple


def quantile(sorted_v: Sequence[float], q: float) -> float:
    """Nearest rank, as takt's statistics report it."""
    if not sorted_v:
        return float("nan")
    i = max(0, min(len(sorted_v) - 1, int(-(-q * len(sorted_v) // 1)) - 1))
    return sorted_v[i]


def chain_cdf(hist: List[List[int]]) -> Tuple[List[float], List[float]]:
    """Steps of the CDF from [upper_ns, count] buckets: x in ms, y in [0, 1]."""
    total = sum(n for _, n in hist)
    if total <= 0:
        raise ValueError("a histogram with no samples")
    xs, ys, seen = [], [], 0
    for upper, n in sorted(hist):
        seen += n
        xs.append(upper / 1e6)
        ys.append(seen / total)
    return xs, ys


def hist_quantile(hist: List[List[int]], q: float, lo: float = float("-inf"), hi: float = float("inf")) -> float:
    """As takt_stats_quantile: the upper bound of the bucket holding the rank, clamped to the
    exact [min, max] (ms)."""
    total = sum(n for _, n in hist)
    rank = max(1, -(-q * total // 1))
    seen = 0
    for upper, n in sorted(hist):
        seen += n
        if seen >= rank:
            return min(max(upper / 1e6, lo), hi)
    return float("nan")


def trace_jobs(path: Path) -> Dict[str, List[Tuple[int, int, int]]]:
    """(release, start, end) ns of every job in a takt trace, by callback name."""
    from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb  # PyPI perfetto
    trace = pb.Trace()
    trace.ParseFromString(path.read_bytes())
    jobs: Dict[str, List[Tuple[int, int, int]]] = defaultdict(list)
    open_slice: Dict[int, Tuple[str, int, int]] = {}
    for pkt in trace.packet:
        if not pkt.HasField("track_event"):
            continue
        te = pkt.track_event
        if te.type == 1:  # slice begin
            release = next((a.int_value for a in te.debug_annotations if a.name == "release_ns"), pkt.timestamp)
            open_slice[te.track_uuid] = (te.name, release, pkt.timestamp)
        elif te.type == 2 and te.track_uuid in open_slice:
            name, release, start = open_slice.pop(te.track_uuid)
            jobs[name].append((release, start, pkt.timestamp))
    return jobs


def _pyplot():
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        return plt
    except ImportError:
        return None


def _plain_log_ticks(ax) -> None:
    """Log axes labelled 0.5, 1, 2, 5, 10 ... rather than in powers of ten."""
    from matplotlib.ticker import FormatStrFormatter, LogLocator, NullFormatter
    ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.xaxis.set_major_formatter(FormatStrFormatter("%g"))
    ax.xaxis.set_minor_formatter(NullFormatter())


def plot_result(result: dict, out: Path, plt) -> List[str]:
    if not isinstance(result, dict) or not isinstance(result.get("chains", []), list):
        raise ValueError("not a takt run result (a JSON object with its chains)")
    chains = [c for c in result.get("chains", []) if isinstance(c, dict) and c.get("histogram")]
    if not chains:
        raise ValueError("no chain with latency samples in this result (a chain needs a histogram)")
    lines = []
    fig, (ax_cdf, ax_hist) = plt.subplots(1, 2, figsize=(12, 4.5))
    for i, c in enumerate(chains):
        xs, ys = chain_cdf(c["histogram"])
        color = f"C{i}"
        ax_cdf.step(xs, ys, where="post", color=color, label=c["name"])
        if c.get("deadline_ns", 0) > 0:
            ax_cdf.axvline(c["deadline_ns"] / 1e6, color=color, linestyle=":", alpha=0.7)
        ax_hist.bar(xs, [n / sum(h[1] for h in c["histogram"]) for _, n in sorted(c["histogram"])],
                    width=[max(x * 0.03, 1e-3) for x in xs], color=color, alpha=0.6, label=c["name"])
        lo, hi = c["min_ns"] / 1e6, c["max_ns"] / 1e6
        p50, p99 = hist_quantile(c["histogram"], 0.5, lo, hi), hist_quantile(c["histogram"], 0.99, lo, hi)
        lines.append(f"chain {c['name']}: {sum(n for _, n in c['histogram'])} samples, p50 {p50:.3f} ms, "
                     f"p99 {p99:.3f} ms, max {c['max_ns'] / 1e6:.3f} ms, deadline misses {c['deadline_misses']}")
    ax_cdf.set_xlabel("end-to-end latency (ms); dotted: deadline")
    ax_cdf.set_ylabel("fraction of chain instances")
    ax_cdf.set_xscale("log")
    ax_cdf.grid(True, which="both", alpha=0.3)
    ax_cdf.legend()
    ax_hist.set_xlabel("end-to-end latency (ms)")
    ax_hist.set_ylabel("fraction per bucket")
    ax_hist.set_xscale("log")
    ax_hist.grid(True, which="both", alpha=0.3)
    _plain_log_ticks(ax_cdf)
    _plain_log_ticks(ax_hist)
    executor = result.get("executor", "?")
    fig.suptitle(f"{result.get('system', result.get('name', ''))} on {executor}: chain latency")
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return lines


def plot_trace(path: Path, out: Path, plt) -> List[str]:
    jobs = trace_jobs(path)
    if not jobs:
        raise ValueError("no jobs in this trace")
    lines = []
    names = sorted(jobs)
    fig, (ax_resp, ax_wait) = plt.subplots(1, 2, figsize=(12, 4.5), sharey=True)
    for i, name in enumerate(names):
        resp = sorted((e - r) / 1e6 for r, s, e in jobs[name])
        wait = sorted((s - r) / 1e6 for r, s, e in jobs[name])
        ys = [(k + 1) / len(resp) for k in range(len(resp))]
        style = "-" if i < 10 else "--"
        ax_resp.step(resp, ys, where="post", linestyle=style, label=name)
        ax_wait.step(wait, ys, where="post", linestyle=style, label=name)
        lines.append(f"callback {name}: {len(resp)} jobs, response p50 {quantile(resp, 0.5):.3f} ms, "
                     f"p99 {quantile(resp, 0.99):.3f} ms, max {resp[-1]:.3f} ms; waiting p99 "
                     f"{quantile(wait, 0.99):.3f} ms")
    ax_resp.set_xlabel("response time: release to end (ms)")
    ax_resp.set_ylabel("fraction of jobs")
    ax_wait.set_xlabel("waiting time: release to start (ms)")
    for ax in (ax_resp, ax_wait):
        ax.set_xscale("symlog", linthresh=0.01)
        ax.grid(True, which="both", alpha=0.3)
    ax_resp.legend(fontsize=7, ncol=2)
    fig.suptitle(f"{path.name}: per-callback response times")
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return lines


def run(args: argparse.Namespace) -> int:
    f: Path = args.file
    if not f.is_file():
        print(f"takt plot: {f}: no such file", file=sys.stderr)
        return 2
    out: Path = args.out or f.with_suffix(".png")
    if out.suffix not in (".png", ".svg"):
        print(f"takt plot: {out}: write .png or .svg", file=sys.stderr)
        return 2
    plt = _pyplot()
    if plt is None:
        print("takt plot: matplotlib is not installed (tools/deps.sh installs it into .venv)", file=sys.stderr)
        return 2
    try:
        if f.suffix == ".json":
            lines = plot_result(json.loads(f.read_text()), out, plt)
        else:
            lines = plot_trace(f, out, plt)
    except ImportError as e:  # (before Exception, which would take it for the reader's own)
        print(f"takt plot: {f}: reading a trace needs PyPI perfetto ({e})", file=sys.stderr)
        return 2
    except (ValueError, KeyError, TypeError, AttributeError, json.JSONDecodeError) as e:
        print(f"takt plot: {f}: {e}", file=sys.stderr)
        return 1
    except Exception as e:  # the trace reader's own errors (a file that is no Perfetto trace)
        if type(e).__module__.split(".")[0] not in ("google", "perfetto"):
            raise
        print(f"takt plot: {f}: not a Perfetto trace ({type(e).__name__}: {e})", file=sys.stderr)
        return 1
    for line in lines:
        print(line)
    print(f"wrote {out}")
    return 0


def add_parser(sub) -> None:
    p = sub.add_parser("plot", help="plot a run's chain latencies (result JSON) or callbacks' response times (trace)")
    p.add_argument("file", type=Path, help="results/run_*.json of takt run, or a trace of takt run --trace")
    p.add_argument("--out", type=Path, help="the figure (.png or .svg; default: FILE with .png)")
