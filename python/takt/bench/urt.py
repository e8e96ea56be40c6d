"""`takt bench urt`: µRT's scaling experiments (nodes, payload, hops, topics, HARD subscribers,
buffered messages, HARD requests) on takt, with a line fitted to each sweep."""

from __future__ import annotations

from pathlib import Path
from typing import Dict, Optional

from takt import native
from takt.bench.common import command, exponent, fit_line, machine, pyplot, run_native, write_json, write_markdown

NAME = "urt"

SWEEPS = {
    "nodes": ("nodes triggered by one timer", "nodes", "Fig. 6A: linear"),
    "payload_pubsub": ("publish-subscribe, payload", "bytes", "Fig. 6B: linear"),
    "payload_rpc": ("RPC round trip, payload", "bytes", "Fig. 6B: linear"),
    "hops": ("communication hops (HARD)", "hops", "Fig. 7A: slightly super-linear for HARD"),
    "topics": ("topics, one HARD subscriber each", "topics", "Fig. 7A/B: slightly super-linear for HARD"),
    "hard_subscribers": ("HARD subscribers on one topic", "subscribers", "Eq. 17: quadratic"),
    "messages": ("messages in a buffer, out-of-order origin times", "messages", "linear (worst case)"),
    "hard_requests": ("HARD requests in a service queue", "requests", "Eq. 18: quadratic"),
}


def run(quick: bool, out: Path) -> int:
    raw = run_native(native.program("bench/takt-bench-urt"), ["--quick"] if quick else [])
    rows = raw["rows"]
    headline: Dict[str, object] = {}
    fits = []
    for sweep, (title, unit, paper) in SWEEPS.items():
        pts = sorted((r["n"], r["p50_ns"], r["max_ns"]) for r in rows if r["sweep"] == sweep)
        xs = [float(p[0]) for p in pts]
        ys = [float(p[1]) for p in pts]
        a, b, r2 = fit_line(xs, ys)
        exp = exponent(xs, ys)
        fits.append((sweep, title, unit, paper, a, b, r2, exp, pts))
        headline[f"{sweep}_r2"] = round(r2, 4) if r2 == r2 else None
        headline[f"{sweep}_exponent"] = round(exp, 3)
        headline[f"{sweep}_ns_per_{unit}"] = round(b, 2)
    headline["hard_subscribers_linear"] = bool((headline["hard_subscribers_r2"] or 0) >= 0.98)
    headline["hard_requests_linear"] = bool((headline["hard_requests_r2"] or 0) >= 0.98)
    m = machine()
    result = {"benchmark": NAME, "command": command(NAME, quick),
              "machine": m, "quick": quick, "reps": raw["reps"], "failures": raw["failures"],
              "headline": headline, "rows": rows}
    write_json(out, NAME, result)
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
    png = _plot(fits, out / "urt.png")
    if png:
        md += [f"![sweeps]({png.name})", ""]
    write_markdown(out, NAME, md)
    return 0 if raw["failures"] == 0 else 1


def _plot(fits, path: Path) -> Optional[Path]:
    plt = pyplot()
    if plt is None:
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
