"""`takt bench ros1`: publish -> subscriber callback start between two processes on loopback over
ROS 1 (a rosmaster the benchmark starts, TCPROS, std_msgs/UInt8MultiArray), for takt's ROS 1 node
and Debian's roscpp and rospy, each pairing in one run; and the time a late subscriber needs
from its start to its first message (registration, lookup, requestTopic, TCPROS set-up)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Tuple

from takt import native
from takt.bench.common import command, machine, machine_line, percentiles, ratio, write_json, write_markdown

NAME = "ros1"
SIZES: List[Tuple[str, int]] = [("64B", 64), ("4KB", 4096), ("64KB", 65536), ("512KB", 524288), ("1MB", 1048576)]
# (publisher, subscriber); roscpp-rt: Debian's roscpp with both processes under `chrt -f 90`, the
# priority takt's I/O thread runs at by default (for a fair look at the tail)
PAIRS: List[Tuple[str, str]] = [("takt", "takt"), ("roscpp", "roscpp"), ("takt", "roscpp"), ("roscpp", "takt"),
                                ("rospy", "rospy"), ("roscpp-rt", "roscpp-rt")]
DEBIAN_PYTHON = "/usr/bin/python3"


def _src() -> Path:
    return native.repo_root() / "bench" / "ros1"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(5)
    if proc.poll() is None:
        proc.kill()


@contextlib.contextmanager
def _rosmaster() -> Iterator[str]:
    exe = shutil.which("rosmaster")
    if exe is None:
        raise RuntimeError("rosmaster is not installed (tools/deps.sh installs python3-rosmaster)")
    port = _free_port()
    proc = subprocess.Popen([exe, "--core", "-p", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        give_up = time.monotonic() + 20
        while time.monotonic() < give_up:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
                break
            time.sleep(0.05)
        else:
            raise RuntimeError(f"rosmaster did not listen on port {port} within 20 s")
        yield f"http://127.0.0.1:{port}/"
    finally:
        _stop(proc)


def roscpp_program() -> Tuple[Optional[Path], str]:
    """bench/ros1/roscpp_bench.cpp built against Debian's roscpp (once, into the build tree), or
    (None, why not)."""
    src = _src() / "roscpp_bench.cpp"
    exe = native.build_dir() / "bench" / "roscpp_bench"
    if exe.is_file() and exe.stat().st_mtime >= src.stat().st_mtime:
        return exe, ""
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "roscpp"], capture_output=True, text=True)
    if flags.returncode != 0:
        return None, "roscpp not found by pkg-config (tools/deps.sh installs libroscpp-dev)"
    exe.parent.mkdir(parents=True, exist_ok=True)
    build = subprocess.run(["g++", "-O2", "-o", str(exe), str(src)] + flags.stdout.split(), capture_output=True,
                           text=True)
    if build.returncode != 0:
        sys.stderr.write(build.stderr)
        return None, "building roscpp_bench against roscpp failed"
    return exe, ""


class Peers:
    """The command line of each implementation's side."""

    def __init__(self) -> None:
        self.takt = native.program("msgs/takt-bench-ros1")
        self.roscpp, self.roscpp_why = roscpp_program()
        self.rt = shutil.which("chrt") is not None and os.geteuid() == 0

    def available(self, impl: str) -> bool:
        if impl.startswith("roscpp"):
            return self.roscpp is not None and (impl == "roscpp" or self.rt)
        if impl == "rospy":
            return Path(DEBIAN_PYTHON).is_file()
        return True

    def argv(self, impl: str, args: List[str]) -> List[str]:
        if impl == "takt":
            return [str(self.takt)] + args
        if impl == "roscpp":
            return [str(self.roscpp)] + args
        if impl == "roscpp-rt":
            return ["chrt", "-f", "90", str(self.roscpp)] + args
        return [DEBIAN_PYTHON, str(_src() / "rospy_bench.py")] + args


def _period_us(size: int) -> int:
    return 5000 if size <= 65536 else 10000


def _cell(peers: Peers, master: str, pub: str, sub: str, size: int, count: int, topic: str) -> Dict[str, object]:
    """One run: the subscriber first, then the publisher (which waits for it)."""
    period = _period_us(size)
    timeout = 40 + count * period // 1_000_000
    s = subprocess.Popen(peers.argv(sub, ["sub", master, topic, str(count), str(timeout), str(size)]),
                         stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    p = subprocess.run(peers.argv(pub, ["pub", master, topic, str(size), str(count), str(period)]),
                       capture_output=True, text=True, timeout=timeout + 20)
    try:
        out, err = s.communicate(timeout=timeout + 20)
    except subprocess.TimeoutExpired:
        s.kill()
        out, err = s.communicate()
    if p.returncode != 0 or s.returncode != 0:
        return {"error": (p.stderr + err).strip().splitlines()[-1:] or [f"exit {p.returncode}/{s.returncode}"],
                "samples_ns": [], "received": 0}
    d = json.loads(out.strip().splitlines()[-1])
    return {"samples_ns": d["samples_ns"], "received": d["received"]}


def _first_message(peers: Peers, master: str, impl: str, topic: str) -> Optional[float]:
    """ms from a subscriber's start to its first message, its publisher (same implementation)
    already publishing every 1 ms."""
    pub = subprocess.Popen(peers.argv(impl, ["pub", master, topic, "64", "600000", "1000", "stream"]),
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(1.5 if impl != "rospy" else 3.0)  # advertised and publishing
        s = subprocess.run(peers.argv(impl, ["sub", master, topic, "1", "30", "64"]), capture_output=True, text=True,
                           timeout=60)
        if s.returncode != 0:
            return None
        first = json.loads(s.stdout.strip().splitlines()[-1])["first_ns"]
        return first / 1e6 if first >= 0 else None
    finally:
        _stop(pub)


def run(quick: bool, out: Path) -> int:
    peers = Peers()
    blocks, per_block = (1, 30) if quick else (2, 300)
    sizes = SIZES[:2] if quick else SIZES
    firsts_reps = 1 if quick else 5
    samples: Dict[str, List[float]] = {}
    received: Dict[str, int] = {}
    expected: Dict[str, int] = {}
    errors: Dict[str, List[str]] = {}
    pairs = [pq for pq in PAIRS if peers.available(pq[0]) and peers.available(pq[1])]
    firsts: Dict[str, List[float]] = {}
    t0 = time.monotonic()
    n = 0
    with _rosmaster() as master:
        for b in range(blocks):
            order = pairs if b % 2 == 0 else list(reversed(pairs))
            for label, size in sizes:
                for pub, sub in order:
                    key = f"{pub}>{sub} {label}"
                    n += 1
                    r = _cell(peers, master, pub, sub, size, per_block, f"/bench_{n}")
                    samples.setdefault(key, []).extend(r["samples_ns"])
                    received[key] = received.get(key, 0) + int(r["received"])
                    expected[key] = expected.get(key, 0) + per_block
                    if "error" in r:
                        errors.setdefault(key, []).extend(r["error"])
        for _ in range(firsts_reps):
            for impl in ("takt", "roscpp", "rospy"):
                if peers.available(impl):
                    n += 1
                    f = _first_message(peers, master, impl, f"/first_{n}")
                    if f is not None:
                        firsts.setdefault(impl, []).append(f)
    took = time.monotonic() - t0
    stats = {k: percentiles(v) for k, v in samples.items() if v}

    def p(pub: str, sub: str, label: str, q: str) -> Optional[float]:
        d = stats.get(f"{pub}>{sub} {label}")
        return d[q] if d else None

    headline: Dict[str, object] = {}
    goals: List[Tuple[str, str, Optional[float], bool]] = []
    for label, _ in sizes:
        tt, rr = p("takt", "takt", label, "p99"), p("roscpp", "roscpp", label, "p99")
        if tt and rr:
            headline[f"p99_takt_over_roscpp_{label}"] = ratio(tt, rr)
            headline[f"p50_takt_over_roscpp_{label}"] = ratio(p("takt", "takt", label, "p50"),
                                                              p("roscpp", "roscpp", label, "p50"))
            goals.append((f"takt↔takt p99 / roscpp↔roscpp p99, {label} (`p99_takt_over_roscpp_{label}`)", "≤ 0.5",
                          headline[f"p99_takt_over_roscpp_{label}"], headline[f"p99_takt_over_roscpp_{label}"] <= 0.5))
        for pub, sub, tag in (("takt", "roscpp", "takt_to_roscpp"), ("roscpp", "takt", "roscpp_to_takt")):
            m = p(pub, sub, label, "p99")
            if m and rr:
                headline[f"p99_{tag}_over_roscpp_{label}"] = ratio(m, rr)
                goals.append((f"{pub}→{sub} p99 / roscpp↔roscpp p99, {label}", "≤ 1.0",
                              headline[f"p99_{tag}_over_roscpp_{label}"], headline[f"p99_{tag}_over_roscpp_{label}"] <= 1.0))
        rt = p("roscpp-rt", "roscpp-rt", label, "p99")
        if tt and rt:
            headline[f"p99_takt_over_roscpp_fifo90_{label}"] = ratio(tt, rt)
    small = p("takt", "takt", "64B", "p99")
    if small:
        headline["p99_publish_to_callback_us_64B"] = round(small / 1e3, 1)
        goals.append(("takt↔takt 64 B publish → callback p99, µs (bounds socket → callback)", "≤ 100",
                      headline["p99_publish_to_callback_us_64B"], headline["p99_publish_to_callback_us_64B"] <= 100))
    med = {k: sorted(v)[len(v) // 2] for k, v in firsts.items() if v}
    for k, v in med.items():
        headline[f"first_message_ms_{k}"] = round(v, 1)
    if "takt" in med and "roscpp" in med:
        headline["first_message_takt_over_roscpp"] = ratio(med["takt"], med["roscpp"])
        goals.append(("registration to first message, takt / roscpp (`first_message_takt_over_roscpp`)", "≤ 0.25",
                      headline["first_message_takt_over_roscpp"], headline["first_message_takt_over_roscpp"] <= 0.25))
    lost = {k: expected[k] - received.get(k, 0) for k in expected if expected[k] != received.get(k, 0)}
    m = machine()
    result = {"benchmark": NAME, "command": command(NAME, quick), "machine": m, "quick": quick, "took_s": round(took, 1),
              "blocks": blocks, "per_block": per_block, "headline": headline, "stats_ns": stats,
              "first_message_ms": firsts, "lost": lost, "errors": errors,
              "roscpp": str(peers.roscpp) if peers.roscpp else peers.roscpp_why,
              "goals": [{"what": g[0], "goal": g[1], "measured": g[2], "met": g[3]} for g in goals]}
    write_json(out, NAME, result)
    us = lambda d, k: f"{d[k] / 1e3:.1f}"
    md = [f"# ros1: publish → callback over ROS 1, takt, roscpp and rospy", "",
          f"Command: `{result['command']}` on {machine_line(m)}; took {took:.0f} s. A rosmaster on loopback; "
          "std_msgs/UInt8MultiArray whose first 8 data bytes carry the publish time (CLOCK_MONOTONIC, taken just "
          "before the publish call); the subscriber's callback records the time since it, first thing. "
          f"{blocks} block(s) x {per_block} messages per cell, pairs in alternating order per block; one message "
          "every 5 ms (10 ms from 512 KB). takt: its ROS 1 node (`takt_ros1_publish`, the subscription's callback "
          "on the node's I/O thread at SCHED_FIFO 90, its default); roscpp: Debian's libroscpp "
          "(`bench/ros1/roscpp_bench.cpp`, callbacks spun by the main thread, tcpNoDelay) at SCHED_OTHER as it "
          "starts, and again with both processes under `chrt -f 90` (roscpp-rt); rospy: Debian's "
          "(`bench/ros1/rospy_bench.py`, tcp_nodelay).", "",
          "## Goals", "", "| | goal | measured | met |", "|---|---|---:|---|"]
    for g in goals:
        md.append(f"| {g[0]} | {g[1]} | {g[2]} | {'**yes**' if g[3] else 'no'} |")
    md += ["", "## publish → callback start", "",
           "| size | publisher → subscriber | received | min µs | p50 µs | p90 µs | p99 µs | max µs |",
           "|---:|---|---:|---:|---:|---:|---:|---:|"]
    for label, _ in sizes:
        for pub, sub in pairs:
            key = f"{pub}>{sub} {label}"
            d = stats.get(key)
            if d:
                md.append(f"| {label} | {pub} → {sub} | {received[key]}/{expected[key]} | {us(d, 'min')} | "
                          f"{us(d, 'p50')} | {us(d, 'p90')} | {us(d, 'p99')} | {us(d, 'max')} |")
            else:
                md.append(f"| {label} | {pub} → {sub} | 0/{expected.get(key, 0)} | failed: "
                          f"{'; '.join(errors.get(key, ['no samples']))} | | | | |")
    md += ["", "## Registration to first message", "",
           "A subscriber started while a publisher of the same implementation already publishes every 1 ms: "
           "milliseconds from the subscriber's start (before its node is initialised; for rospy after its imports) "
           f"to its first callback, median of {firsts_reps}.", "", "| implementation | runs (ms) | median ms |",
           "|---|---|---:|"]
    for k, v in firsts.items():
        md.append(f"| {k} | {', '.join(f'{x:.1f}' for x in v)} | {med[k]:.1f} |")
    if not peers.roscpp:
        md += ["", f"roscpp: {peers.roscpp_why}."]
    md.append("")
    write_markdown(out, NAME, md)
    return 0 if not errors else 1
