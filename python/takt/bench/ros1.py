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
from takt.bench.common import (command, cpu_latency_held, machine, machine_line, percentiles, ratio, run_json,
                               write_json, write_markdown)

NAME = "ros1"
SIZES: List[Tuple[str, int]] = [("64B", 64), ("4KB", 4096), ("64KB", 65536), ("512KB", 524288), ("1MB", 1048576)]
# (publisher, subscriber); roscpp-rt: Debian's roscpp with both processes under `chrt -f 90`, the
# priority takt's I/O thread runs at by default (for a fair look at the tail)
# takt-tcp: takt with its same-host transport off (TAKT_BENCH_ROS1_SHM=0), messages through the
# TCPROS connection as between a takt node and roscpp (takt↔takt on one host goes through shared
# memory: docs/ros1.md, "Shared memory between takt nodes"); its socket → callback is the one of
# the goal (a message that came through shared memory has no socket time)
PAIRS: List[Tuple[str, str]] = [("takt", "takt"), ("roscpp", "roscpp"), ("takt", "roscpp"), ("roscpp", "takt"),
                                ("rospy", "rospy"), ("roscpp-rt", "roscpp-rt"), ("takt-tcp", "takt-tcp")]
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


def roscpp_program(name: str = "roscpp_bench") -> Tuple[Optional[Path], str]:
    """bench/ros1/NAME.cpp built against Debian's roscpp (once, into the build tree), or
    (None, why not)."""
    src = _src() / f"{name}.cpp"
    exe = native.build_dir() / "bench" / name
    if exe.is_file() and exe.stat().st_mtime >= src.stat().st_mtime:
        return exe, ""
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "roscpp"], capture_output=True, text=True)
    if flags.returncode != 0:
        return None, "roscpp not found by pkg-config (tools/deps.sh installs libroscpp-dev)"
    exe.parent.mkdir(parents=True, exist_ok=True)
    tmp = exe.with_name(f".{name}.{os.getpid()}")  # whole or not at all: another run may build it too
    build = subprocess.run(["g++", "-O2", "-o", str(tmp), str(src)] + flags.stdout.split(), capture_output=True,
                           text=True)
    if build.returncode != 0:
        tmp.unlink(missing_ok=True)
        sys.stderr.write(build.stderr)
        return None, f"building {name} against roscpp failed"
    os.replace(tmp, exe)
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
        if impl == "takt-tcp":
            return ["env", "TAKT_BENCH_ROS1_SHM=0", str(self.takt)] + args
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
    try:  # the subscriber goes with the cell, whatever ends it (a publisher's timeout, Ctrl-C)
        p = subprocess.run(peers.argv(pub, ["pub", master, topic, str(size), str(count), str(period)]),
                           capture_output=True, text=True, timeout=timeout + 20)
        out, err = s.communicate(timeout=timeout + 20)
    except subprocess.TimeoutExpired:
        s.kill()
        out, err = s.communicate()
        return {"error": [f"timed out after {timeout + 20} s"], "samples_ns": [], "received": 0}
    finally:
        if s.poll() is None:
            s.kill()
            s.wait()
    if p.returncode != 0 or s.returncode != 0:
        return {"error": (p.stderr + err).strip().splitlines()[-1:] or [f"exit {p.returncode}/{s.returncode}"],
                "samples_ns": [], "received": 0}
    d = json.loads(out.strip().splitlines()[-1])
    return {"samples_ns": d["samples_ns"], "received": d["received"],
            "socket_ns": [x for x in d.get("socket_ns", []) if x >= 0],  # takt subscribers only
            "shm": d.get("shm_connections")}  # takt subscribers: through shared memory (1) or not (0)


def _floor(peers: Peers, size: int, count: int) -> Dict[str, List[float]]:
    """The bare TCP receive (`takt-bench-ros1 floor`): {"publish": ns, "socket": ns}, empty if it failed."""
    period = _period_us(size)
    d, _ = run_json([str(peers.takt), "floor", str(size), str(count), str(period)], 30 + count * period // 1_000_000)
    if d is None:
        return {}
    return {"publish": d["samples_ns"], "socket": [x for x in d["socket_ns"] if x >= 0]}


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


# The chains: a takt node (`takt-bench-ros1 chains`, preempt, one timer per chain) publishes each
# chain's message over TCPROS to a far node written against the roscpp API
# (bench/ros1/roscpp_chains.cpp): built against takt (priorities 30/20/10 on the preempt executor)
# and against Debian's roscpp (one spinning thread, or a MultiThreadedSpinner). Chain 1's latency
# is measured alone (unloaded) and with chains 2 and 3, whose far callbacks keep a CPU busy. The
# floor (`takt-bench-ros1 chains-floor`) is the same topology with no middleware: threads at the
# chains' priorities, a socket per chain, one reading thread at the I/O thread's priority.
CHAIN_PERIOD_US = 10000
CHAIN_WORK_US = 4500  # each of the two lower chains: 2 x 45 % of a CPU
FAR_NODES: List[Tuple[str, str]] = [("takt", "takt roscpp API, preempt"),
                                    ("roscpp-single", "Debian roscpp, ros::spin"),
                                    ("roscpp-multi", "Debian roscpp, MultiThreadedSpinner(3)"),
                                    ("floor", "no middleware (the floor)")]


def _chains_cell(near: Path, far: Path, spinner: str, master: str, chains: int, count: int) -> Dict[str, object]:
    """One run: the far node first (roscpp_chains COUNT CHAINS WORK_US single|multi), then the
    takt node, which waits for its subscriptions."""
    work = CHAIN_WORK_US if chains > 1 else 0
    timeout = 40 + count * CHAIN_PERIOD_US // 1_000_000
    env = dict(os.environ, ROS_MASTER_URI=master)
    f = subprocess.Popen([str(far), str(count), str(chains), str(work), spinner], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env)
    try:
        n = subprocess.run([str(near), "chains", master, str(chains), str(count), str(CHAIN_PERIOD_US)],
                           capture_output=True, text=True, timeout=timeout + 20)
        out, err = f.communicate(timeout=timeout + 20)
    except subprocess.TimeoutExpired:
        f.kill()
        f.communicate()
        return {"error": ["timed out"], "samples_ns": [], "received": 0}
    finally:  # the far node goes with the cell (Ctrl-C too)
        if f.poll() is None:
            f.kill()
            f.wait()
    if n.returncode != 0 or f.returncode != 0 or not out.strip():
        return {"error": (n.stderr + err).strip().splitlines()[-1:] or [f"exit {n.returncode}/{f.returncode}"],
                "samples_ns": [], "received": 0}
    d = json.loads(out.strip().splitlines()[-1])
    return {"samples_ns": d["samples_ns"], "received": d["received"]}


def _floor_chains_cell(near: Path, chains: int, count: int) -> Dict[str, object]:
    """One run of the floor (`takt-bench-ros1 chains-floor`), as _chains_cell's."""
    work = CHAIN_WORK_US if chains > 1 else 0
    d, why = run_json([str(near), "chains-floor", str(chains), str(count), str(CHAIN_PERIOD_US), str(work)],
                       60 + count * CHAIN_PERIOD_US // 1_000_000)
    if d is None:
        return {"error": why, "samples_ns": [], "received": 0}
    return {"samples_ns": d["samples_ns"], "received": d["received"]}


def _chains(peers: "Peers", master: str, quick: bool) -> Dict[str, object]:
    # many short blocks, unloaded and loaded in turn: the machine's slow drifts (seconds) land on
    # both states of every far node rather than on the one that ran during them
    count, blocks = (50, 1) if quick else (250, 8)
    deb, why = roscpp_program("roscpp_chains")
    fars = {"takt": (native.program("src/roscpp/takt-bench-ros1-chains"), "single"),
            "roscpp-single": (deb, "single"), "roscpp-multi": (deb, "multi"), "floor": (peers.takt, "")}
    samples: Dict[str, List[float]] = {}
    received: Dict[str, int] = {}
    errors: Dict[str, List[str]] = {}
    for b in range(blocks):
        order = FAR_NODES if b % 2 == 0 else FAR_NODES[::-1]
        for far, _ in order:  # each far node unloaded and loaded back to back, the first in turn
            exe, spinner = fars[far]
            if exe is None:
                continue
            for chains in ((1, 3) if b % 2 == 0 else (3, 1)):
                if far == "floor":
                    r = _floor_chains_cell(exe, chains, count)
                else:
                    r = _chains_cell(peers.takt, exe, spinner, master, chains, count)
                key = f"{far} {'loaded' if chains > 1 else 'unloaded'}"
                samples.setdefault(key, []).extend(r["samples_ns"])
                received[key] = received.get(key, 0) + int(r["received"])
                if "error" in r:
                    errors.setdefault(key, []).extend(r["error"])
    return {"count": count, "blocks": blocks, "samples": samples, "received": received, "errors": errors,
            "roscpp": str(deb) if deb else why}


def run(quick: bool, out: Path) -> int:
    peers = Peers()
    # at least 1000 samples a cell (BENCHMARKS.md): a p99 from fewer moves between runs. 2400:
    # with 1200, roscpp's 64 KB p99 alone moved 164-282 µs between runs (its 12th largest value),
    # and every takt / roscpp ratio with it
    blocks, per_block = (1, 30) if quick else (8, 300)
    sizes = SIZES[:1] if quick else SIZES
    firsts_reps = 1 if quick else 5
    samples: Dict[str, List[float]] = {}
    sock: Dict[str, List[float]] = {}
    received: Dict[str, int] = {}
    expected: Dict[str, int] = {}
    errors: Dict[str, List[str]] = {}
    pairs = [pq for pq in PAIRS if peers.available(pq[0]) and peers.available(pq[1])]
    firsts: Dict[str, List[float]] = {}
    floor: Dict[str, List[float]] = {}  # "publish|socket LABEL": the bare TCP receive
    shm_runs: Dict[str, List[int]] = {}  # cell -> [runs through shared memory, runs]
    t0 = time.monotonic()
    n = 0
    # every cell on a machine in one idle state: takt's processes request it themselves
    with cpu_latency_held() as latency_held, _rosmaster() as master:
        for b in range(blocks):
            order = pairs if b % 2 == 0 else list(reversed(pairs))
            # sizes in turn too (ascending, then descending): whatever a block's first cells pay
            # (the machine after the last block's largest messages) falls on every size alike
            for label, size in (sizes if b % 2 == 0 else list(reversed(sizes))):
                for pub, sub in order:
                    key = f"{pub}>{sub} {label}"
                    n += 1
                    r = _cell(peers, master, pub, sub, size, per_block, f"/bench_{n}")
                    samples.setdefault(key, []).extend(r["samples_ns"])
                    if r.get("socket_ns"):
                        sock.setdefault(key, []).extend(r["socket_ns"])
                    received[key] = received.get(key, 0) + int(r["received"])
                    if r.get("shm") is not None:  # runs of the cell whose subscriber had shared memory
                        shm_runs.setdefault(key, [0, 0])
                        shm_runs[key][0] += int(r["shm"] > 0)
                        shm_runs[key][1] += 1
                    expected[key] = expected.get(key, 0) + per_block
                    if "error" in r:
                        errors.setdefault(key, []).extend(r["error"])
                fl = _floor(peers, size, per_block)
                for k, v in fl.items():
                    floor.setdefault(f"{k} {label}", []).extend(v)
        for _ in range(firsts_reps):
            for impl in ("takt", "roscpp", "rospy"):
                if peers.available(impl):
                    n += 1
                    f = _first_message(peers, master, impl, f"/first_{n}")
                    if f is not None:
                        firsts.setdefault(impl, []).append(f)
        chains = _chains(peers, master, quick)
    took = time.monotonic() - t0
    stats = {k: percentiles(v) for k, v in samples.items() if v}
    sstats = {k: percentiles(v) for k, v in sock.items() if v}
    fstats = {k: percentiles(v) for k, v in floor.items() if v}

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
            # what no middleware at all reaches against the same roscpp cells: the bare TCP
            # transfer of the floor (publish -> receive), same blocks
            fl = fstats.get(f"publish {label}")
            if fl:
                headline[f"p99_floor_over_roscpp_{label}"] = ratio(fl["p99"], rr)
            goals.append((f"takt↔takt p99 / roscpp↔roscpp p99, {label} (`p99_takt_over_roscpp_{label}`" +
                          (f"; a bare TCP transfer, no middleware, same run: {headline[f'p99_floor_over_roscpp_{label}']}"
                           if fl else "") + ")", "≤ 0.5",
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
        tcp = p("takt-tcp", "takt-tcp", label, "p99")
        if tcp and rr:  # takt↔takt over TCPROS alone (no goal of its own: the one before shared memory)
            headline[f"p99_takt_tcp_over_roscpp_{label}"] = ratio(tcp, rr)
    small = p("takt", "takt", "64B", "p99")
    if small:
        headline["p99_publish_to_callback_us_64B"] = round(small / 1e3, 1)
    for label, _ in sizes:
        d = sstats.get(f"takt-tcp>takt-tcp {label}")
        if d:
            headline[f"p99_socket_to_callback_us_{label}"] = round(d["p99"] / 1e3, 1)
    for label, _ in sizes:
        d = fstats.get(f"socket {label}")
        if d:
            headline[f"p99_socket_floor_us_{label}"] = round(d["p99"] / 1e3, 1)
    if "p99_socket_floor_us_64B" in headline and "p99_socket_to_callback_us_64B" in headline:
        headline["p99_socket_to_callback_over_floor_64B"] = ratio(headline["p99_socket_to_callback_us_64B"],
                                                                  headline["p99_socket_floor_us_64B"])
    key = "p99_socket_to_callback_us_64B"
    if key in headline:
        fl = headline.get("p99_socket_floor_us_64B")
        goals.append((f"a 64 B message from the socket to its takt callback, p99 µs (`{key}`: the kernel's receive "
                      "time to the callback's start, takt→takt over TCPROS (`takt-tcp`)" +
                      (f"; a bare TCP receive on this machine, same run: {fl} µs" if fl is not None else "") + ")",
                      "≤ 100", headline[key], headline[key] <= 100))
    med = {k: sorted(v)[len(v) // 2] for k, v in firsts.items() if v}
    for k, v in med.items():
        headline[f"first_message_ms_{k}"] = round(v, 1)
    if "takt" in med and "roscpp" in med:
        headline["first_message_takt_over_roscpp"] = ratio(med["takt"], med["roscpp"])
        goals.append(("registration to first message, takt / roscpp (`first_message_takt_over_roscpp`)", "≤ 0.25",
                      headline["first_message_takt_over_roscpp"], headline["first_message_takt_over_roscpp"] <= 0.25))
    cstats = {k: percentiles(v) for k, v in chains["samples"].items() if v}
    for far, _ in FAR_NODES:
        lo, hi = cstats.get(f"{far} unloaded"), cstats.get(f"{far} loaded")
        tag = far.replace("-", "_")
        if lo and hi:
            headline[f"chains_top_p99_loaded_over_unloaded_{tag}"] = ratio(hi["p99"], lo["p99"])
        if hi:
            headline[f"chains_top_p99_loaded_us_{tag}"] = round(hi["p99"] / 1e3, 1)
    key = "chains_top_p99_loaded_over_unloaded_takt"
    if key in headline:
        fl = headline.get("chains_top_p99_loaded_over_unloaded_floor")
        goals.append(("3 chains, the top one through a takt node and a roscpp-API node: its p99 with the lower "
                      f"chains saturating a CPU / alone (`{key}`" +
                      (f"; the same topology without middleware, same run: {fl}" if fl is not None else "") + ")",
                      "≤ 1.2", headline[key], headline[key] <= 1.2))
    lost = {k: expected[k] - received.get(k, 0) for k in expected if expected[k] != received.get(k, 0)}
    m = machine()
    result = {"benchmark": NAME, "command": command(NAME, quick), "machine": m, "quick": quick, "took_s": round(took, 1),
              "blocks": blocks, "per_block": per_block, "headline": headline, "stats_ns": stats,
              "socket_to_callback_stats_ns": sstats, "floor_stats_ns": fstats,
              "first_message_ms": firsts, "lost": lost, "errors": errors, "shm_runs": shm_runs,
              "chains": {"count": chains["count"], "blocks": chains["blocks"], "period_us": CHAIN_PERIOD_US,
                         "work_us": CHAIN_WORK_US, "stats_ns": cstats, "received": chains["received"],
                         "errors": chains["errors"], "roscpp": chains["roscpp"]},
              "roscpp": str(peers.roscpp) if peers.roscpp else peers.roscpp_why,
              "cpu_dma_latency_0": latency_held,
              "goals": [{"what": g[0], "goal": g[1], "measured": g[2], "met": g[3]} for g in goals]}
    write_json(out, NAME, result)
    us = lambda d, k: f"{d[k] / 1e3:.1f}"
    md = [f"# ros1: publish → callback over ROS 1, takt, roscpp and rospy", "",
          f"Command: `{result['command']}` on {machine_line(m)}; took {took:.0f} s. A rosmaster on loopback; "
          "std_msgs/UInt8MultiArray whose first 8 data bytes carry the publish time (CLOCK_MONOTONIC, taken just "
          "before the publish call); the subscriber's callback records the time since it, first thing. "
          f"{blocks} block(s) x {per_block} messages per cell, pairs and sizes in alternating order per block; one message "
          "every 5 ms (10 ms from 512 KB). takt: its ROS 1 node (`takt_ros1_publish` from a thread at SCHED_FIFO 60, "
          "where a takt callback that publishes runs; the subscription's callback on the node's I/O thread at "
          "SCHED_FIFO 90, its default; both processes set up as takt's runner sets up a real-time process: "
          "memory locked, freed blocks kept, idle CPUs in their shallowest state); roscpp: Debian's libroscpp "
          "(`bench/ros1/roscpp_bench.cpp`, callbacks spun by the main thread, tcpNoDelay) at SCHED_OTHER as it "
          "starts, and again with both processes under `chrt -f 90` (roscpp-rt); rospy: Debian's "
          "(`bench/ros1/rospy_bench.py`, tcp_nodelay). " +
          ("The benchmark holds `/dev/cpu_dma_latency` at 0 for the whole run (the PM QoS request takt's real-time "
           "set-up and cyclictest make; system-wide), so every implementation's cells run with idle CPUs in the same "
           "state." if latency_held else
           "`/dev/cpu_dma_latency` could not be held (not root): takt's processes request it while they run, the "
           "others' cells run without it."), "",
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
    md += ["", "takt → takt goes through shared memory (both nodes on this host: the subscriber offers it, the "
           "publisher writes each message into a slot and a 4-byte doorbell on the TCPROS connection; docs/ros1.md, "
           "\"Shared memory between takt nodes\"); takt-tcp → takt-tcp is the same programs with it off "
           "(`TAKT_BENCH_ROS1_SHM=0`), every message through the TCPROS connection, as takt ↔ roscpp. Runs whose "
           "subscriber had its connection through shared memory, of all runs: " +
           ", ".join(f"{k.replace('>', ' → ')} {v[0]}/{v[1]}" for k, v in sorted(shm_runs.items())
                     if k.startswith(("takt>", "takt-tcp>"))) + ".",
           "", "## socket → callback start (takt subscribers)", "",
           "From the time the message reached the subscriber's host (the kernel's receive time of the TCP segment "
           "that made it whole, `takt_ros1_received_at`) to the start of its callback: what the subscribing "
           "node itself adds (the I/O thread's wake-up, the read, the dispatch), in the same runs as above. "
           "(takt → takt: from the publisher's write into shared memory, the same clock.)", "",
           "| size | publisher → subscriber | min µs | p50 µs | p90 µs | p99 µs | max µs |",
           "|---:|---|---:|---:|---:|---:|---:|"]
    for label, _ in sizes:
        for pub, sub in pairs:
            d = sstats.get(f"{pub}>{sub} {label}")
            if d:
                md.append(f"| {label} | {pub} → {sub} | {us(d, 'min')} | {us(d, 'p50')} | {us(d, 'p90')} | "
                          f"{us(d, 'p99')} | {us(d, 'max')} |")
        d = fstats.get(f"socket {label}")
        if d:
            md.append(f"| {label} | bare TCP receive (the floor) | {us(d, 'min')} | {us(d, 'p50')} | {us(d, 'p90')} | "
                      f"{us(d, 'p99')} | {us(d, 'max')} |")
    md += ["", "The floor (`takt-bench-ros1 floor`, in the same blocks as the cells above): no middleware, two "
           "processes and one TCP connection on loopback, a writer at SCHED_FIFO 60 framing each message as TCPROS "
           "does, a reader at the scheduling of takt's I/O thread (SCHED_FIFO 90) asleep in `poll` that reads each "
           "message whole with `recvmsg` and `SO_TIMESTAMPNS`: the wake-up of a sleeping thread and the reads, "
           "what this machine allows any ROS 1 node. Its publish → receive, for comparison with the first table:"
           "", "", "| size | min µs | p50 µs | p90 µs | p99 µs | max µs |", "|---:|---:|---:|---:|---:|---:|"]
    for label, _ in sizes:
        d = fstats.get(f"publish {label}")
        if d:
            md.append(f"| {label} | {us(d, 'min')} | {us(d, 'p50')} | {us(d, 'p90')} | {us(d, 'p99')} | "
                      f"{us(d, 'max')} |")
    md += ["", "## Registration to first message", "",
           "A subscriber started while a publisher of the same implementation already publishes every 1 ms: "
           "milliseconds from the subscriber's start (before its node is initialised; for rospy after its imports) "
           f"to its first callback, median of {firsts_reps}.", "", "| implementation | runs (ms) | median ms |",
           "|---|---|---:|"]
    for k, v in firsts.items():
        md.append(f"| {k} | {', '.join(f'{x:.1f}' for x in v)} | {med[k]:.1f} |")
    md += ["", "## Three chains: the top one under load", "",
           "A takt node (`takt-bench-ros1 chains`, preempt executor) releases three timers every "
           f"{CHAIN_PERIOD_US // 1000} ms at the same instants (priorities 30, 20, 10; each in a callback group "
           "of its own, as the far node's callbacks are), each publishing a 64-byte "
           "stamped message over TCPROS to a far node written against the roscpp API (`bench/ros1/roscpp_chains.cpp`), "
           "built against takt (`takt::roscpp`, preempt, the chains' priorities through `ros::takt::Scheduling`) "
           "and, unchanged but for the priorities, against Debian's roscpp; and the floor, the same topology with no "
           "middleware (`takt-bench-ros1 chains-floor`: a thread per chain at the chains' priorities writes its frame "
           "on a socket of its own at the same instants; in the far process one thread at the I/O thread's priority "
           "polls every socket, reads each frame and posts a semaphore to the chain's thread, at the chain's priority). "
           "The far callbacks of chains 2 and 3 keep "
           f"a CPU busy for {CHAIN_WORK_US} µs each per message (2 × {CHAIN_WORK_US / CHAIN_PERIOD_US:.0%} of a CPU); chain 1's "
           "callback records the time since the publish, first thing. Unloaded: chain 1 alone. "
           f"{chains['blocks']} block(s) × {chains['count']} messages of chain 1 per cell, the far nodes and the "
           "two states in turn.", "",
           "| far node | chain 1 | received | min µs | p50 µs | p90 µs | p99 µs | max µs | p99 loaded / unloaded |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for far, label in FAR_NODES:
        for state in ("unloaded", "loaded"):
            d = cstats.get(f"{far} {state}")
            r = headline.get(f"chains_top_p99_loaded_over_unloaded_{far.replace('-', '_')}")
            got = chains["received"].get(f"{far} {state}", 0)
            want = chains["count"] * chains["blocks"]
            if d:
                md.append(f"| {label} | {state} | {got}/{want} | {us(d, 'min')} | {us(d, 'p50')} | {us(d, 'p90')} | "
                          f"{us(d, 'p99')} | {us(d, 'max')} | {r if state == 'loaded' and r is not None else ''} |")
            else:
                md.append(f"| {label} | {state} | {got}/{want} | failed: "
                          f"{'; '.join(chains['errors'].get(f'{far} {state}', ['no samples']))} | | | | | |")
    if not peers.roscpp:
        md += ["", f"roscpp: {peers.roscpp_why}."]
    md.append("")
    write_markdown(out, NAME, md)
    return 0 if not errors and not chains["errors"] else 1
