"""`takt bench dds`: one-way latency, publish -> callback start, takt -> takt over DDS (Cyclone,
two processes) for 64 B, 4 KB, 64 KB and 1 MB, beside Cyclone's own `ddsperf` ping-pong (half the
round trip) and rclpy -> rclpy (Fast DDS) in the same run; p50, p99, max.

Headline: p50_takt_over_ddsperf_<size> (goal <= 1.1 at 64 B, <= 1.2 at 1 MB) and
p99_takt_over_rclpy_p50_<size> (goal <= 1: takt's p99 below rclpy's median). And the chains: the
top chain's p99 across the DDS hop while two lower-priority chains saturate the link, over its
p99 alone (chains_top_p99_loaded_over_unloaded, goal <= 1.2), beside the same ratio of the same
traffic with no middleware (chains_top_p99_loaded_over_unloaded_floor)."""

from __future__ import annotations

import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List, Optional

from takt import native
from takt.bench.common import (command, cpu_latency_held, machine, machine_line, percentiles, ratio, run_json,
                               write_json, write_markdown)

NAME = "dds"
SIZES = (64, 4096, 65536, 1048576)
LABEL = {64: "64B", 4096: "4KB", 65536: "64KB", 1048576: "1MB"}
DDSPERF_LINE = re.compile(r"size (\d+) mean [\d.]+us min ([\d.]+)us 50% ([\d.]+)us 90% [\d.]+us "
                          r"99% ([\d.]+)us max ([\d.]+)us cnt (\d+)")


def _pair(sub: List[str], pub: List[str], env: Dict[str, str], timeout: float,
          pub_json: bool = False) -> Optional[dict]:
    """Start the subscriber, then the publisher; the subscriber's JSON (with pub_json, under
    "publisher" the publisher's JSON too), or None (said why)."""
    s = subprocess.Popen(sub, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    p = None
    try:
        time.sleep(0.5)
        p = subprocess.Popen(pub, env=env, stdout=subprocess.PIPE if pub_json else subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
        out, err = s.communicate(timeout=timeout)
        try:
            pout, _ = p.communicate(timeout=30 if pub_json else 5)
        except subprocess.TimeoutExpired:
            if pub_json:
                raise
            # the subscriber has what it measured: the publisher may still wait for the
            # acknowledgements of a subscriber that has gone (it is ended below)
            pout = ""
        if s.returncode not in (0, 3) or not out.strip():
            sys.stderr.write(err)
            return None
        raw = json.loads(out)
        if pub_json:
            raw["publisher"] = json.loads(pout) if pout and pout.strip() else {}
        return raw
    except (subprocess.TimeoutExpired, json.JSONDecodeError) as e:
        sys.stderr.write(f"takt bench dds: {sub[0]}: {e}\n")
        return None
    finally:
        for proc in (s, p):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()


Samples = Dict[int, List[float]]  # size -> latencies (ns)


def _samples(raw: Optional[dict]) -> Samples:
    if raw is None:
        return {}
    return {r["size"]: list(r["samples"]) for r in raw["rows"] if r["samples"]}


def _rows(acc: Samples) -> Dict[int, Dict[str, float]]:
    return {size: percentiles(v) for size, v in acc.items() if v}


def _merge(acc: Samples, more: Samples) -> None:
    for size, v in more.items():
        acc.setdefault(size, []).extend(v)


def takt_samples(count: int, period_us: int, domain: int, mode: str = "pub") -> Samples:
    """mode pub: the publishing thread hands each message to the DDS writer lane's thread (the
    defaults); pub-direct: it writes to Cyclone itself (direct_write); pub-job: the bridge node's
    forwarding job sends it (the path before send_in_publisher)."""
    exe = str(native.program("bench/takt-bench-dds"))
    sizes = [str(s) for s in SIZES]
    raw = _pair([exe, "sub", str(domain), str(count)] + sizes,
                [exe, mode, str(domain), str(count), str(period_us)] + sizes, dict(os.environ), 120)
    return _samples(raw)


def pingpong_samples(count: int, period_us: int, domain: int) -> Samples:
    """takt's round trip as ddsperf measures its own: ping publishes, pong's callback publishes
    the message back, ping's callback records the round trip; halved here (one-way as ddsperf's
    half round trip). The defaults' path both ways (send_in_publisher, writer lanes)."""
    exe = str(native.program("bench/takt-bench-dds"))
    sizes = [str(s) for s in SIZES]
    pong = subprocess.Popen([exe, "pong", str(domain), str(count)] + sizes,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(0.5)
        ping = subprocess.run([exe, "ping", str(domain), str(count), str(period_us)] + sizes,
                              capture_output=True, text=True,
                              timeout=60 + count * len(SIZES) * period_us / 1e6)
        if ping.returncode not in (0, 3) or not ping.stdout.strip():
            sys.stderr.write(ping.stderr)
            return {}
        return {s: [v / 2 for v in rtt] for s, rtt in _samples(json.loads(ping.stdout)).items()}
    except (subprocess.TimeoutExpired, json.JSONDecodeError) as e:
        sys.stderr.write(f"takt bench dds: ping-pong: {e}\n")
        return {}
    finally:
        if pong.poll() is None:
            pong.kill()
        pong.wait()


def wake_samples(count: int, period_us: int) -> List[float]:
    """The floor of one hand-off: a futex wake-up from a SCHED_FIFO 90 thread (where Cyclone's
    receive thread runs) to a SCHED_FIFO 60 one (the callbacks'), one every period_us; the
    latencies in ns, [] when the program failed."""
    exe = str(native.program("bench/takt-bench-dds"))
    try:
        r = subprocess.run([exe, "wake", str(count), str(period_us)], capture_output=True, text=True,
                           timeout=30 + count * period_us / 1e6)
        if r.returncode != 0:
            sys.stderr.write(r.stderr)
            return []
        return [float(v) for v in json.loads(r.stdout)["rows"][0]["samples"]]
    except (subprocess.TimeoutExpired, json.JSONDecodeError) as e:
        sys.stderr.write(f"takt bench dds: wake: {e}\n")
        return []


def rclpy_samples(count: int, period_s: float, domain: int) -> Samples:
    py = native.repo_root() / ".venv-ros2" / "bin" / "python"
    script = native.repo_root() / "bench" / "dds" / "rclpy_oneway.py"
    if not py.exists() or not script.exists():
        return {}
    env = dict(os.environ, ROS_DOMAIN_ID=str(domain), RMW_IMPLEMENTATION="rmw_fastrtps_cpp")
    sizes = [str(s) for s in SIZES]
    raw = _pair([str(py), str(script), "sub", str(count)] + sizes,
                [str(py), str(script), "pub", str(count), str(period_s)] + sizes, env, 180)
    return _samples(raw)


def ddsperf_seconds(seconds: int, domain: int) -> Dict[int, list]:
    """ddsperf ping at 50 Hz against ddsperf pong, per size: its per-second reports (matches of
    DDSPERF_LINE). ddsperf prints half the round trip: its ping records (now - the ping's source
    timestamp) / 2, the pong echoing that timestamp (ddsperf.c, update_roundtrip's caller)."""
    exe = shutil.which("ddsperf")
    if exe is None:
        return {}
    rows: Dict[int, list] = {}
    for size in SIZES:
        pong = subprocess.Popen([exe, "-i", str(domain), "-D", str(seconds + 3), "pong"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            time.sleep(0.3)
            ping = subprocess.run([exe, "-i", str(domain), "-D", str(seconds), "ping", "50Hz", "size",
                                   str(size)], capture_output=True, text=True, timeout=seconds + 20)
        finally:
            pong.kill()
            pong.wait()
        secs = [m for m in (DDSPERF_LINE.search(l) for l in ping.stdout.splitlines()) if m]
        if secs:
            rows[size] = secs
    return rows


def ddsperf_rows(secs: Dict[int, list]) -> Dict[int, Dict[str, float]]:
    """One-way as ddsperf prints it (half the round trip, halved by ddsperf itself: not again
    here); the per-second reports combined as: p50 = median of the seconds' medians, p99 = the
    largest second's p99, max = the largest max (ns)."""
    return {size: {"count": sum(int(m.group(6)) for m in ms),
                   "p50": statistics.median(float(m.group(3)) for m in ms) * 1e3,
                   "p99": max(float(m.group(4)) for m in ms) * 1e3,
                   "max": max(float(m.group(5)) for m in ms) * 1e3}
            for size, ms in secs.items() if ms}


# The chains: the top chain (64 B every 5 ms, priority 30) across the DDS hop, alone and while the
# two lower chains (priorities 20 and 10) each offer 512 KiB every millisecond, about 1 GB/s
# together: what two takt processes carry over Cyclone on this machine's loopback (offering 2 GB/s
# collapses it: the receiving sockets overflow). Loaded twice: with the publisher's defaults (a
# writer lane per priority, the 1 MiB window) and with one lane and no window (every route through
# one writer thread, unpaced: what takt did before the lanes).
CHAIN_LOW_SIZE = 524288
CHAIN_LOW_PERIOD_US = 1000
CHAIN_PERIOD_US = 5000
CHAIN_CASES = (("unloaded", 0, []), ("loaded", CHAIN_LOW_PERIOD_US, []),
               ("loaded, one lane, no window", CHAIN_LOW_PERIOD_US, ["1", "0"]))
# The same topology and load with no middleware (takt-bench-dds chains-floor: a thread per chain
# sending raw UDP datagrams into one socket, a receive thread handing each whole sample to the
# chain's thread): what this machine allows the top chain, unloaded and loaded.
FLOOR_CASES = (("floor, unloaded", 0), ("floor, loaded", CHAIN_LOW_PERIOD_US))


def _chains_cell(count: int, domain: int, low_period: int, extra: List[str]) -> Optional[dict]:
    """One run of a case: the subscriber's raw figures (top chain's samples, the lower chains'
    bytes and seconds) and the publisher's statistics."""
    exe = str(native.program("bench/takt-bench-dds"))
    sub = _pair([exe, "chains-sub", str(domain), str(count), str(CHAIN_LOW_SIZE)],
                [exe, "chains-pub", str(domain), str(count), str(CHAIN_PERIOD_US), str(CHAIN_LOW_SIZE),
                 str(low_period)] + extra, dict(os.environ), 120 + count * 0.05, pub_json=True)
    if sub is None:
        return None
    return {"samples": list(sub["samples"]), "published": count,
            "low_bytes": sum(l["bytes"] for l in sub["low"]), "low_seconds": sub["low_seconds"],
            "low_received": [l["received"] for l in sub["low"]], "seconds": sub["seconds"],
            "publisher": sub["publisher"]}


def _chains_floor_cell(count: int, low_period: int) -> Optional[dict]:
    """One run of a floor case, in _chains_cell's form (no publisher statistics)."""
    raw, why = run_json([str(native.program("bench/takt-bench-dds")), "chains-floor", str(count),
                         str(CHAIN_PERIOD_US), str(CHAIN_LOW_SIZE), str(low_period)],
                        60 + count * 0.02, ok=(0, 3))
    if raw is None:
        sys.stderr.write(f"takt bench dds: chains-floor: {'; '.join(why)}\n")
        return None
    return {"samples": list(raw["samples"]), "published": count,
            "low_bytes": sum(l["bytes"] for l in raw["low"]), "low_seconds": raw["low_seconds"],
            "low_received": [l["received"] for l in raw["low"]], "seconds": raw["seconds"],
            "publisher": {}}


def _chains_row(cells: List[dict]) -> dict:
    """A case's blocks as one row: the top chain's samples pooled, counts and statistics summed,
    the lower chains' rate over all their bytes and seconds."""
    samples = [v for c in cells for v in c["samples"]]
    low_bytes = sum(c["low_bytes"] for c in cells)
    low_seconds = sum(c["low_seconds"] for c in cells)
    publisher: Dict[str, object] = {}  # counters summed; lanes (how many there were) the largest
    for c in cells:
        for k, v in c["publisher"].items():
            if k == "lanes":
                publisher[k] = max(publisher.get(k, 0), v)
            elif isinstance(v, list):
                publisher[k] = [a + b for a, b in zip(publisher.get(k, [0] * len(v)), v)]
            elif isinstance(v, int) and not isinstance(v, bool):
                publisher[k] = publisher.get(k, 0) + v
    return {"top": percentiles(samples) if samples else None, "top_received": len(samples),
            "top_published": sum(c["published"] for c in cells),
            "low_MBps": round(low_bytes / low_seconds / 1e6, 1) if low_seconds > 0 else None,
            "low_received": [sum(x) for x in zip(*(c["low_received"] for c in cells))],
            "seconds": sum(c["seconds"] for c in cells), "blocks": len(cells),
            "publisher": publisher}


def chains_rows(count: int, domain: int, blocks: int = 1) -> Dict[str, dict]:
    """The three cases and the two floor cases in `blocks` interleaved parts of count / blocks
    releases each (unloaded, loaded, one lane, the floor unloaded and loaded in turn; the other way
    round in every second block, so each unloaded part runs next to its loaded one, each first in
    turn), every takt part on a DDS domain of its own; a case missing a part is left out."""
    cells: Dict[str, List[dict]] = {c[0]: [] for c in CHAIN_CASES + FLOOR_CASES}
    parts = [(name, k, low_period, extra) for k, (name, low_period, extra) in enumerate(CHAIN_CASES)]
    parts += [(name, None, low_period, None) for name, low_period in FLOOR_CASES]
    for b in range(blocks):
        for name, k, low_period, extra in (parts if b % 2 == 0 else parts[::-1]):
            if k is None:
                r = _chains_floor_cell(count // blocks, low_period)
            else:
                r = _chains_cell(count // blocks, domain + b * len(CHAIN_CASES) + k, low_period, extra)
            if r is not None:
                cells[name].append(r)
    return {name: _chains_row(c) for name, c in cells.items() if len(c) == blocks}


def _us(d: Dict[int, Dict[str, float]], size: int, k: str) -> str:
    return f"{d[size][k] / 1e3:.1f}" if size in d else "n/a"


# Blocks: every row is measured in BLOCKS interleaved parts (takt, takt direct, ddsperf, takt's
# ping-pong, the wake-ups, rclpy in turn), so a burst of outside load lands on all of them rather
# than on the one that ran alone.
BLOCKS = 4
# the chains in more, shorter blocks (250 releases of the top chain, 1.25 s each): the machine's
# slow drifts (seconds) land on the unloaded and the loaded case alike
CHAIN_BLOCKS = 8
# takt's own ping-pong, per size, at ddsperf's 50 Hz (20 ms a round trip: 4 s a size a block)
PINGPONG_COUNT = 800
# the hand-off's floor (takt-bench-dds wake) at takt's one-way rate (200 Hz) and ddsperf's (50 Hz)
WAKE_PERIODS_US = (5000, 20000)
WAKE_COUNT = 1000


def run(quick: bool, out: Path) -> int:
    count = 10 if quick else 2000
    blocks = 1 if quick else BLOCKS
    base = 150 + os.getpid() % 20  # DDS domains of this run's own
    acc_takt: Samples = {}
    acc_direct: Samples = {}
    acc_rcl: Samples = {}
    acc_pp: Samples = {}
    acc_wake: Dict[int, List[float]] = {}  # period (µs) -> wake-up latencies
    acc_perf: Dict[int, list] = {}
    # every row on a machine in one idle state: takt's processes request it themselves
    with cpu_latency_held() as latency_held:
        for b in range(blocks):
            dom = base + 8 * b
            _merge(acc_takt, takt_samples(count // blocks, 10000 if quick else 5000, dom))
            _merge(acc_direct, takt_samples(count // blocks, 10000 if quick else 5000, dom + 3, "pub-direct"))
            for size, ms in ddsperf_seconds(1 if quick else 20 // blocks, dom + 1).items():
                acc_perf.setdefault(size, []).extend(ms)
            # at ddsperf's rate, 50 Hz: a sample's latency depends on how long the machine idled
            _merge(acc_pp, pingpong_samples(5 if quick else PINGPONG_COUNT // blocks, 20000, dom + 4))
            for period in WAKE_PERIODS_US:  # takt's one-way rate and ddsperf's
                acc_wake.setdefault(period, []).extend(wake_samples(10 if quick else WAKE_COUNT // blocks, period))
            _merge(acc_rcl, rclpy_samples(5 if quick else 2000 // blocks, 0.01 if quick else 0.005, dom + 2))
        takt, direct, rcl, pp = _rows(acc_takt), _rows(acc_direct), _rows(acc_rcl), _rows(acc_pp)
        wake = {period: percentiles(v) for period, v in acc_wake.items() if v}
        perf = ddsperf_rows(acc_perf)
        # DDS domains up to base + 8 * BLOCKS + 3 * CHAIN_BLOCKS - 1 <= 232, the largest there is
        chains = chains_rows(20 if quick else 2000, base + 8 * blocks, 1 if quick else CHAIN_BLOCKS)
    headline: Dict[str, object] = {}
    for s in SIZES:
        t, dt = takt.get(s), direct.get(s)
        headline[f"p50_takt_over_ddsperf_{LABEL[s]}"] = ratio(t["p50"], perf[s]["p50"]) if t and s in perf else None
        headline[f"p99_takt_over_rclpy_p50_{LABEL[s]}"] = ratio(t["p99"], rcl[s]["p50"]) if t and s in rcl else None
        headline[f"p50_takt_direct_over_ddsperf_{LABEL[s]}"] = (ratio(dt["p50"], perf[s]["p50"])
                                                                if dt and s in perf else None)
        headline[f"p50_takt_pingpong_over_ddsperf_{LABEL[s]}"] = (ratio(pp[s]["p50"], perf[s]["p50"])
                                                                  if s in pp and s in perf else None)
    for period in WAKE_PERIODS_US:
        hz = 1000000 // period
        headline[f"wake_p50_us_{hz}Hz"] = round(wake[period]["p50"] / 1e3, 1) if period in wake else None
    # takt's ping-pong against ddsperf's plus one hand-off at the same rate: the floor of a design
    # whose callbacks run in their executor, not in the middleware's receive thread
    w50 = wake.get(20000)
    for s in SIZES:
        headline[f"p50_takt_pingpong_over_ddsperf_plus_wake_{LABEL[s]}"] = (
            ratio(pp[s]["p50"], perf[s]["p50"] + w50["p50"]) if s in pp and s in perf and w50 else None)
    unl, lod, one = (chains.get(c[0]) for c in CHAIN_CASES)
    def top(r, k):  # noqa: E306
        return r["top"][k] if r is not None and r["top"] is not None else None
    def over(a, b):  # noqa: E306
        return ratio(a, b) if a is not None and b is not None else None
    headline["chains_top_p99_loaded_over_unloaded"] = over(top(lod, "p99"), top(unl, "p99"))
    headline["chains_top_p99_loaded_over_unloaded_one_lane"] = over(top(one, "p99"), top(unl, "p99"))
    funl, flod = (chains.get(c[0]) for c in FLOOR_CASES)
    headline["chains_top_p99_loaded_over_unloaded_floor"] = over(top(flod, "p99"), top(funl, "p99"))
    headline["chains_top_p50_loaded_minus_unloaded_us"] = (
        round((top(lod, "p50") - top(unl, "p50")) / 1e3, 1) if top(lod, "p50") and top(unl, "p50") else None)
    headline["chains_top_p50_loaded_minus_unloaded_us_floor"] = (
        round((top(flod, "p50") - top(funl, "p50")) / 1e3, 1) if top(flod, "p50") and top(funl, "p50") else None)
    headline["chains_top_lost_loaded"] = lod["top_published"] - lod["top_received"] if lod else None
    headline["chains_low_MBps_loaded"] = lod["low_MBps"] if lod else None
    goals = [("p50_takt_over_ddsperf_64B", 1.1), ("p50_takt_over_ddsperf_1MB", 1.2),
             ("p99_takt_over_rclpy_p50_64B", 1.0), ("chains_top_p99_loaded_over_unloaded", 1.2)]
    m = machine()
    md = ["# dds: one-way latency over DDS, takt beside ddsperf and rclpy", "",
          f"Command: `{command(NAME, quick)}` on {machine_line(m)}. takt: two processes "
          "(`takt-bench-dds` sub and pub, preempt executors, callbacks at SCHED_FIFO 60), publish -> "
          "callback start measured from the origin time the DDS stamp carries (both processes read "
          "CLOCK_MONOTONIC); topics of bytes (CDR uint8[]), reliable, keep-last 8. ddsperf: Cyclone's "
          "own ping-pong at 50 Hz, one-way = half the round trip as ddsperf prints it (it halves the "
          "round trip itself; its per-second medians' median, the largest per-second p99 and max). rclpy: two processes, std_msgs/msg/UInt8MultiArray on Fast "
          "DDS, publish -> callback start. Default interface, no other load arranged. " +
          ("The benchmark holds `/dev/cpu_dma_latency` at 0 for the whole run (the PM QoS request takt's "
           "real-time set-up and cyclictest make; system-wide), so ddsperf's and rclpy's rows run with idle CPUs "
           "in the same state as takt's. " if latency_held else
           "`/dev/cpu_dma_latency` could not be held (not root): takt's processes request it while they run, "
           "ddsperf's and rclpy's rows run without it. ") +
          "takt: the publishing "
          "thread hands each message to the DDS writer lane's thread (the bridge's send_in_publisher, as "
          "system files make it); takt direct: the same with `direct_write` on (the publishing thread "
          "writes to Cyclone itself: one hand-off less, but Cyclone's allocations in the publisher, so "
          "off by default; docs/dds.md). The publisher publishes from a takt timer's callback "
          "(SCHED_FIFO 60, the preempt executor's thread of that timer), as a periodic publisher does. "
          "takt ping-pong: takt measured as ddsperf measures itself (`takt-bench-dds ping` and `pong`, "
          "pong's callback publishes each message back, half the round trip, 50 Hz, the defaults' path "
          "both ways). "
          f"Every row in {blocks} interleaved block(s) (takt, takt direct, ddsperf, takt ping-pong, "
          "the wake-ups, rclpy in turn)."
          + (" Smoke mode: a handful of samples, the numbers mean nothing." if quick else ""), "",
          "| size | takt p50 µs | takt p99 µs | takt max µs | takt direct p50 µs | takt direct p99 µs | "
          "ddsperf p50 µs | ddsperf p99 µs | takt ping-pong p50 µs | takt ping-pong p99 µs | "
          "rclpy p50 µs | rclpy p99 µs | takt p50 / ddsperf | "
          "takt direct p50 / ddsperf | takt ping-pong p50 / ddsperf | takt p99 / rclpy p50 |",
          "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    na = lambda v: v if v is not None else "n/a"  # noqa: E731
    for s in SIZES:
        a = headline[f"p50_takt_over_ddsperf_{LABEL[s]}"]
        ad = headline[f"p50_takt_direct_over_ddsperf_{LABEL[s]}"]
        b = headline[f"p99_takt_over_rclpy_p50_{LABEL[s]}"]
        c = headline[f"p50_takt_pingpong_over_ddsperf_{LABEL[s]}"]
        md.append(f"| {LABEL[s]} | {_us(takt, s, 'p50')} | {_us(takt, s, 'p99')} | {_us(takt, s, 'max')} | "
                  f"{_us(direct, s, 'p50')} | {_us(direct, s, 'p99')} | "
                  f"{_us(perf, s, 'p50')} | {_us(perf, s, 'p99')} | {_us(pp, s, 'p50')} | "
                  f"{_us(pp, s, 'p99')} | {_us(rcl, s, 'p50')} | "
                  f"{_us(rcl, s, 'p99')} | {na(a)} | {na(ad)} | {na(c)} | {na(b)} |")
    if wake:
        md += ["", "The floor of one hand-off, a futex wake-up from a SCHED_FIFO 90 thread to a SCHED_FIFO "
               "60 one (`takt-bench-dds wake`; ddsperf's reply leaves from Cyclone's receive thread, takt's "
               "callbacks run in their executor: one wake-up more): " + "; ".join(
                   f"{1000000 // p} Hz p50 {wake[p]['p50'] / 1e3:.1f} µs, p99 {wake[p]['p99'] / 1e3:.1f} µs"
                   for p in WAKE_PERIODS_US if p in wake) + ". takt's ping-pong p50 over ddsperf's plus "
               "one wake-up at 50 Hz: " + ", ".join(
                   f"{LABEL[s]} {na(headline[f'p50_takt_pingpong_over_ddsperf_plus_wake_{LABEL[s]}'])}"
                   for s in SIZES) + "."]
    md += ["", "Goals: " + "; ".join(
        f"{k} <= {g}: " + ("n/a" if headline[k] is None else ("met" if headline[k] <= g else "NOT met"))
        for k, g in goals), ""]
    md += ["## The top chain while lower chains saturate the link", "",
           f"Three chains from timers in one process (`takt-bench-dds chains-pub`, preempt executor) to "
           f"subscriptions in another (`chains-sub`) over DDS, every route at its chain's priority: chain 1 "
           f"(priority 30) 64 B every {CHAIN_PERIOD_US // 1000} ms; chains 2 and 3 (priorities 20 and 10) "
           f"{CHAIN_LOW_SIZE // 1024} KiB every {CHAIN_LOW_PERIOD_US // 1000} ms each, about 1 GB/s offered together: "
           "what this loopback carries between two takt processes. Latency: chain 1's timer release -> "
           "its callback start in the far process. Each chain's timer and subscription in a callback group of "
           "its own (the chains are independent; in their node's default group, mutually exclusive as "
           "rclcpp's, the top chain's release would wait for a lower chain's 512 KiB publication to end). "
           "All topics reliable, keep-last 8. Loaded with the "
           "publisher's defaults (a writer lane per priority, the 1 MiB window: docs/dds.md) and with one lane "
           "and no window (every route through one writer thread, unpaced). "
           "The floor: the same chains, priorities, sizes and rates with no middleware (`takt-bench-dds "
           "chains-floor`): a thread per chain sends raw UDP datagrams (a lower sample as datagrams of 14,400 "
           "bytes, as Cyclone packs fragments) into one socket, as Cyclone receives a participant's data on one; "
           "a receive thread at the DDS receive thread's priority copies each lower sample together and wakes the "
           "chain's thread, which records the latency; nothing acknowledges or paces (what does not fit the "
           "socket's 1 MiB is lost). "
           f"The five cases in {1 if quick else CHAIN_BLOCKS} interleaved block(s) (unloaded, loaded, one lane, "
           "floor unloaded, floor loaded in turn, the other way round in every second block), each part a pair of "
           "processes of its own.", "",
           "| case | top p50 µs | top p99 µs | top max µs | top received / published | lower chains MB/s | "
           "window waits | sends refused |",
           "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name in [c[0] for c in CHAIN_CASES + FLOOR_CASES]:
        r = chains.get(name)
        if r is None:
            md.append(f"| {name} | n/a | n/a | n/a | n/a | n/a | n/a | n/a |")
            continue
        t = r["top"] or {}
        f = lambda k: f"{t[k] / 1e3:.1f}" if k in t else "n/a"  # noqa: E731
        pub = r["publisher"]
        md.append(f"| {name} | {f('p50')} | {f('p99')} | {f('max')} | {r['top_received']} / {r['top_published']} | "
                  f"{r['low_MBps'] if r['low_MBps'] is not None else '—'} | {pub.get('window_waits', '—')} | {pub.get('tx_queue_full', '—')} |")
    md += ["", "chains_top_p99_loaded_over_unloaded (goal <= 1.2): "
           f"{headline['chains_top_p99_loaded_over_unloaded']}; with one lane and no window: "
           f"{headline['chains_top_p99_loaded_over_unloaded_one_lane']}; the floor: "
           f"{headline['chains_top_p99_loaded_over_unloaded_floor']}. The top chain's p50, loaded minus unloaded: "
           f"takt {headline['chains_top_p50_loaded_minus_unloaded_us']} µs, the floor "
           f"{headline['chains_top_p50_loaded_minus_unloaded_us_floor']} µs.", ""]
    if not perf:
        md.append("ddsperf (Debian cyclonedds-tools) is not installed: its column is n/a.")
    if not rcl:
        md.append("No rclpy (.venv-ros2, tools/deps_ros2.sh): its column is n/a.")
    result = {"benchmark": NAME, "command": command(NAME, quick), "machine": m, "quick": quick,
              "headline": headline, "cpu_dma_latency_0": latency_held,
              "wake": {str(p): w for p, w in wake.items()},
              "rows": [{"size": s, "takt": takt.get(s), "takt_direct": direct.get(s), "ddsperf": perf.get(s),
                        "takt_pingpong": pp.get(s),
                        "rclpy": rcl.get(s)} for s in SIZES],
              "chains": {"period_us": CHAIN_PERIOD_US, "low_size": CHAIN_LOW_SIZE,
                         "low_period_us": CHAIN_LOW_PERIOD_US, "cases": chains}}
    write_json(out, NAME, result)
    write_markdown(out, NAME, md)
    return 0 if (len(takt) == len(SIZES) and len(direct) == len(SIZES) and len(pp) == len(SIZES)
                 and len(chains) == len(CHAIN_CASES) + len(FLOOR_CASES)) else 1
