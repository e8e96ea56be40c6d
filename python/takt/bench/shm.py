"""`takt bench shm`: publish -> callback latency between two processes through takt's shared
memory (docs/shm.md), beside takt inside one process and iceoryx (its C binding, RouDi started
here) in the same run, for payloads of 64 B to 4 MiB, with blocking and busy-waiting receivers.

Both programs are placed alike (bench/shm/placement.h): the publisher pinned to one CPU at
SCHED_FIFO 70, the receiver pinned to another at SCHED_FIFO 80 (blocking rows) or at the normal
policy (busy-waiting rows: a SCHED_FIFO spinner is throttled by the kernel's real-time bandwidth
limit, docs/shm.md), memory locked; the "same CPU" rows put both on one CPU. Each row reports how
many messages the receiver took on the publisher's CPU, which checks the placement.

takt over the UDP bridge (the communication daemon on loopback) is measured for 64 B only: a
daemon frame carries at most 1024 bytes; its threads are not pinned. iceoryx2 (0.4.1, the C binding
of the crates.io crate iceoryx2-ffi, built with cargo by tools/deps_iceoryx2.sh; no broker) is
measured when that binding was built: blocking through an event service the publisher notifies
after each send (iceoryx2's way to wake a subscriber), or busy-waiting on receive."""

from __future__ import annotations

import contextlib
import getpass
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Tuple

from takt import native
from takt.bench.common import (command, distribution, machine, machine_line, ratio, run_native, us,
                               write_json, write_markdown)

NAME = "shm"
BLOCKS = 8  # interleaved blocks per cell (not in --quick)
SIZES = (64, 4096, 65536, 1 << 20, 4 << 20)
UDP_MAX = 1024
# rows: (key, program mode, placement); placements: "cross" (publisher and receiver on two CPUs,
# SCHED_FIFO 70 / 80), "busy" (the same CPUs, the spinning receiver at the normal policy), "one"
# (both on one CPU, SCHED_FIFO 70 / 80), "free" (priorities only: the UDP row's threads)
TAKT_ROWS = (("inproc", "inproc", "cross"), ("shm-block", "shm-block", "cross"),
             ("shm-block-1cpu", "shm-block", "one"), ("shm-busy", "shm-busy", "busy"),
             ("shm-route", "shm-route", "cross"), ("udp", "udp", "free"))
ICEORYX_ROWS = (("iceoryx-block", "block", "cross"), ("iceoryx-block-1cpu", "block", "one"),
                ("iceoryx-busy", "busy", "busy"))
ICEORYX2_ROWS = (("iceoryx2-block", "block", "cross"), ("iceoryx2-block-1cpu", "block", "one"),
                 ("iceoryx2-busy", "busy", "busy"))
LABEL = {"inproc": "takt, one process (copy into the topic -> tide callback)",
         "shm-block": "takt shm, futex wake-up, zero-copy take",
         "shm-block-1cpu": "takt shm, futex wake-up, both on one CPU",
         "shm-busy": "takt shm, busy-waiting take",
         "shm-route": "takt shm routed: receive thread -> local topic (copy) -> tide callback",
         "udp": "takt over the UDP bridge (daemon on loopback) -> tide callback",
         "iceoryx-block": "iceoryx, wait set wake-up",
         "iceoryx-block-1cpu": "iceoryx, wait set wake-up, both on one CPU",
         "iceoryx-busy": "iceoryx, busy-waiting take",
         "iceoryx2-block": "iceoryx2, event listener wake-up",
         "iceoryx2-block-1cpu": "iceoryx2, event listener wake-up, both on one CPU",
         "iceoryx2-busy": "iceoryx2, busy-waiting receive"}


def cpus() -> Tuple[int, int]:
    """The publisher's and the receiver's CPU: two different ones when there are two."""
    allowed = sorted(os.sched_getaffinity(0))
    return allowed[0], allowed[1] if len(allowed) > 1 else allowed[0]


def smoke_placement(where: str) -> str:
    """--quick is a smoke of the programs, not a measurement: its two-CPU rows are not pinned (a
    pinned receiver cannot leave a CPU that other work holds for tens of ms on a shared machine,
    and a short run loses messages then); its busy receivers spin at SCHED_FIFO 80 (a 40-message
    row ends long before the real-time bandwidth limit takes its share). Both programs alike."""
    return "one" if where == "one" else "free"


def placement_args(where: str) -> List[str]:
    pub, recv = cpus()
    if where == "one":
        pub = recv
    prio = ["--pub-prio", "70", "--recv-prio", "0" if where == "busy" else "80"]
    if where == "free":
        return prio
    return ["--pub-cpu", str(pub), "--recv-cpu", str(recv)] + prio


def placement_text(where: str) -> str:
    pub, recv = cpus()
    if where == "free":
        return "not pinned, FIFO 70 -> FIFO 80"
    if where == "one":
        return f"CPU {recv} FIFO 70 -> CPU {recv} FIFO 80"
    return f"CPU {pub} FIFO 70 -> CPU {recv} " + ("normal policy" if where == "busy" else "FIFO 80")


def size_label(n: int) -> str:
    return f"{n >> 20}MB" if n >= 1 << 20 else (f"{n >> 10}KB" if n >= 1024 else f"{n}B")


@contextlib.contextmanager
def roudi(config: Path) -> Iterator[Optional[str]]:
    """Run iox-roudi with config for the block; yields None when running, else why not."""
    exe = shutil.which("iox-roudi")
    if exe is None:
        yield "iox-roudi is not installed (Debian package iceoryx)"
        return
    # RouDi's segments (its management segment, a payload segment named after the user); those
    # this run creates are removed after it, as RouDi may leave them when it stops
    segments = [Path("/dev/shm/iceoryx_mgmt"), Path("/dev/shm") / getpass.getuser()]
    ours = [p for p in segments if not p.exists()]
    proc = subprocess.Popen([exe, "-c", str(config)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    time.sleep(1.0)  # RouDi creates its segments before applications may register
    try:
        yield None if proc.poll() is None else f"iox-roudi exited at start (status {proc.returncode})"
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for p in ours:
            with contextlib.suppress(OSError):
                p.unlink()


def sample(exe: Path, mode: str, where: str, size: int, count: int) -> Tuple[List[float], int]:
    """The latencies (ns) and how many messages were taken on the publisher's CPU."""
    # one period for every size: the period sets how deeply the receiver's CPU sleeps between
    # messages (a 4 MB row at 2 ms against a 64 B row at 1 ms measured the period, not the size)
    period_us = 1000
    raw = run_native(exe, ["--mode", mode, "--size", str(size), "--count", str(count),
                           "--period-us", str(period_us)] + placement_args(where))
    return [float(v) for v in raw["lat_ns"]], int(raw.get("same_cpu", 0))


def iceoryx2_program(build: bool) -> Tuple[Optional[Path], str]:
    """takt-bench-iceoryx2, or None and why not. With build, in a source tree, its C binding is
    built first when missing (tools/deps_iceoryx2.sh: cargo, about a minute the first time; `make
    deps` leaves it out, as only this benchmark's full run uses it) and the program then."""
    rel = "bench/takt-bench-iceoryx2"
    try:
        return native.program(rel), ""
    except native.NativeMissing as e:
        missing = f"{e} (tools/deps_iceoryx2.sh builds its C binding with cargo)"
    script = native.repo_root() / "tools" / "deps_iceoryx2.sh"
    if not build or not script.is_file() or not (native.build_dir() / "CMakeCache.txt").is_file():
        return None, missing
    subprocess.run([str(script)], check=False)
    lib = native.repo_root() / "bench/shm/iceoryx2/target/release/libiceoryx2_ffi_static.a"
    if not lib.is_file():
        return None, "iceoryx2's C binding did not build (tools/deps_iceoryx2.sh said why)"
    # the binding is found when the build tree is configured: configure again, build the program
    for cmd in (["cmake", str(native.build_dir())],
                ["cmake", "--build", str(native.build_dir()), "--target", "takt-bench-iceoryx2"]):
        done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=False)
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["(no output)"])[-1]
            return None, f"{' '.join(cmd[:2])} ... failed: {last}"
    try:
        return native.program(rel), ""
    except native.NativeMissing:
        return None, missing


def run(quick: bool, out: Path) -> int:
    count = 40 if quick else 2000
    takt_exe = native.program("bench/takt-bench-shm")
    rows: List[Dict[str, object]] = []
    dists: Dict[Tuple[str, int], Dict[str, float]] = {}
    failures = 0
    where_of: Dict[str, str] = {}
    place = smoke_placement if quick else (lambda w: w)
    same: Dict[str, List[int]] = {}  # row -> [taken on the publisher's CPU, taken]

    def keep(key: str, where: str, size: int, lat: List[float], on_pub_cpu: int) -> None:
        where_of[key] = where
        dists[(key, size)] = distribution(lat)
        tally = same.setdefault(key, [0, 0])
        tally[0] += on_pub_cpu
        tally[1] += len(lat)
        rows.append({"mode": key, "size": size, "placement": placement_text(where),
                     "on_publisher_cpu": on_pub_cpu, **dists[(key, size)]})

    iceoryx_note = ""
    short: List[str] = []
    try:
        iox_exe: Optional[Path] = native.program("bench/takt-bench-iceoryx")
    except native.NativeMissing as e:
        iox_exe, iceoryx_note = None, str(e)
    iox2_exe, iceoryx2_note = iceoryx2_program(build=not quick)
    # every cell in BLOCKS blocks, the blocks interleaved (sizes in turn, takt's and iceoryx's rows
    # in turn within a size), so a burst of outside load lands on all of them rather than on one
    # cell that ran alone for its two seconds (docs/shm.md: the 4 MB / 64 B ratio moved by 2x
    # between runs when each cell ran in one piece)
    blocks = 1 if quick else BLOCKS
    per_block = count // blocks
    got: Dict[Tuple[str, int], Tuple[List[float], List[int]]] = {}
    with (roudi(native.repo_root() / "bench" / "shm" / "roudi.toml") if iox_exe is not None
          else contextlib.nullcontext(iceoryx_note)) as why:
        if why:
            iceoryx_note, iox_exe = why, None
        for block in range(blocks):
            for size in (SIZES if block % 2 == 0 else tuple(reversed(SIZES))):
                cells = [(takt_exe, key, mode, where) for key, mode, where in TAKT_ROWS
                         if not (mode == "udp" and size > UDP_MAX)]
                if iox_exe is not None:
                    cells += [(iox_exe, key, mode, where) for key, mode, where in ICEORYX_ROWS]
                if iox2_exe is not None:
                    cells += [(iox2_exe, key, mode, where) for key, mode, where in ICEORYX2_ROWS]
                for exe, key, mode, where in cells:
                    lat, on_pub_cpu = sample(exe, mode, place(where), size, per_block)
                    acc = got.setdefault((key, size), ([], [0]))
                    acc[0].extend(lat)
                    acc[1][0] += on_pub_cpu
    iceoryx_keys = {key for key, _, _ in (*ICEORYX_ROWS, *ICEORYX2_ROWS)}
    want = per_block * blocks
    for key, _, where in (*TAKT_ROWS, *ICEORYX_ROWS, *ICEORYX2_ROWS):
        for size in SIZES:
            if (key, size) not in got:
                continue
            lat, on_pub_cpu = got[(key, size)]
            if key in iceoryx_keys:
                if len(lat) < want:  # the peer's losses are reported, not our failure
                    short.append(f"{key} {size_label(size)}: {len(lat)} of {want} received")
            else:
                # a bench, not a test: a few lost count as noise; the smoke (--quick, unpinned, beside
                # other benchmarks) only checks that each program still delivers
                failures += (len(lat) == 0) if quick else (len(lat) < 0.9 * want)
            keep(key, place(where), size, lat, on_pub_cpu[0])

    def p99(mode: str, size: int) -> float:
        d = dists.get((mode, size), {})
        return d.get("p99", 0.0) if d.get("count") else 0.0

    headline: Dict[str, object] = {
        "p99_shm_over_inprocess_64B": ratio(p99("shm-block", 64), p99("inproc", 64)),
        "p99_shm_over_iceoryx_64B": ratio(p99("shm-block", 64), p99("iceoryx-block", 64)),
        "p99_shm_over_iceoryx_64B_1cpu": ratio(p99("shm-block-1cpu", 64), p99("iceoryx-block-1cpu", 64)),
        "p99_4MB_over_64B": ratio(p99("shm-block", 4 << 20), p99("shm-block", 64)),
        "p99_busy_shm_over_iceoryx_64B": ratio(p99("shm-busy", 64), p99("iceoryx-busy", 64), 3),
        "p99_shm_over_iceoryx2_64B": ratio(p99("shm-block", 64), p99("iceoryx2-block", 64)),
        "p99_busy_shm_over_iceoryx2_64B": ratio(p99("shm-busy", 64), p99("iceoryx2-busy", 64), 3),
        "p99_route_over_inprocess_64B": ratio(p99("shm-route", 64), p99("inproc", 64)),
        "p99_shm_over_udp_64B": ratio(p99("shm-block", 64), p99("udp", 64), 3),
    }
    m = machine()
    modes = [key for key, _, _ in (*TAKT_ROWS, *ICEORYX_ROWS, *ICEORYX2_ROWS) if any((key, s) in dists for s in SIZES)]
    md = [f"# shm: publish -> callback between two processes, beside one process and iceoryx", "",
          f"Command: `{command(NAME, quick)}` on {machine_line(m)}; {count} messages per cell, one every "
          f"1 ms at every size, in {blocks} interleaved block(s) of {per_block} (sizes and rows in turn). takt's and iceoryx's programs are placed alike (bench/shm/placement.h): "
          "the publisher pinned to one CPU at SCHED_FIFO 70, the receiver pinned to the other at "
          "SCHED_FIFO 80 when it sleeps, at the normal policy when it spins (a SCHED_FIFO spinner loses "
          "50 ms a second to the kernel's real-time bandwidth limit, docs/shm.md); the 1-CPU rows put "
          "both on one CPU; memory locked. The publisher stamps CLOCK_MONOTONIC into the first 8 bytes "
          "right before publishing; the receiver reads the clock when its code has the message. "
          "Latencies in µs; the last column counts the messages the receiver took on the CPU the "
          "publisher ran on (all sizes), which checks the placement."
          + (" --quick: a smoke, not a measurement: the two-CPU rows are not pinned and busy receivers "
             "spin at SCHED_FIFO 80 (both programs alike)." if quick else ""), ""]
    if iceoryx_note:
        md += [f"iceoryx not measured: {iceoryx_note}", ""]
    if iceoryx2_note:
        md += [f"iceoryx2 not measured: {iceoryx2_note}", ""]
    md += ["| receiver | " + " | ".join(f"{size_label(s)} p50 / p99 / max" for s in SIZES)
           + " | placement (publisher -> receiver) | on the publisher's CPU |",
           "|---|" + "---:|" * len(SIZES) + "---|---:|"]
    for mode in modes:
        cells = []
        for s in SIZES:
            d = dists.get((mode, s), {"count": 0})
            cells.append(f"{us(d, 'p50')} / {us(d, 'p99')} / {us(d, 'max')}")
        on, of = same.get(mode, [0, 0])
        md.append(f"| {LABEL[mode]} | " + " | ".join(cells)
                  + f" | {placement_text(where_of[mode])} | {on} of {of} |")
    md += ["", "Headline: " + ", ".join(f"{k} = {v}" for k, v in headline.items()), ""]
    if short:
        md += ["Messages lost by iceoryx or iceoryx2 (a queue of 4 overflowed or a loan failed): " + "; ".join(short), ""]
    result = {"benchmark": NAME, "command": command(NAME, quick), "machine": m, "quick": quick,
              "failures": failures, "iceoryx": iceoryx_note or "measured", "iceoryx2": iceoryx2_note or "measured", "iceoryx_short": short, "headline": headline,
              "rows": rows}
    write_json(out, NAME, result)
    write_markdown(out, NAME, md)
    return 0 if failures == 0 else 1
