"""`takt bench shm`: publish -> callback latency between two processes through takt's shared
memory (docs/shm.md), beside takt inside one process and iceoryx (its C binding, RouDi started
here) in the same run, for payloads of 64 B to 4 MiB, with blocking and busy-waiting receivers.

takt over the UDP bridge (the communication daemon on loopback) is measured for 64 B only: a
daemon frame carries at most 1024 bytes. Not measured: iceoryx2 (no Debian package; its C
binding is built with cargo, which the machine does not have)."""

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
SIZES = (64, 4096, 65536, 1 << 20, 4 << 20)
TAKT_MODES = ("inproc", "shm-block", "shm-busy", "shm-route", "udp")
UDP_MAX = 1024
ICEORYX_MODES = ("block", "busy")
LABEL = {"inproc": "takt, one process (copy into the topic -> tide callback)",
         "shm-block": "takt shm, futex wake-up, zero-copy take",
         "shm-busy": "takt shm, busy-waiting take",
         "shm-route": "takt shm routed: receive thread -> local topic (copy) -> tide callback",
         "udp": "takt over the UDP bridge (daemon on loopback) -> tide callback",
         "iceoryx-block": "iceoryx, wait set wake-up",
         "iceoryx-busy": "iceoryx, busy-waiting take"}


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


def sample(exe: Path, mode: str, size: int, count: int) -> List[float]:
    period_us = 2000 if size >= 1 << 20 else 1000
    raw = run_native(exe, ["--mode", mode, "--size", str(size), "--count", str(count),
                           "--period-us", str(period_us)])
    return [float(v) for v in raw["lat_ns"]]


def run(quick: bool, out: Path) -> int:
    count = 40 if quick else 2000
    takt_exe = native.program("bench/takt-bench-shm")
    rows: List[Dict[str, object]] = []
    dists: Dict[Tuple[str, int], Dict[str, float]] = {}
    failures = 0
    for size in SIZES:
        for mode in TAKT_MODES:
            if mode == "udp" and size > UDP_MAX:
                continue
            lat = sample(takt_exe, mode, size, count)
            failures += len(lat) < 0.9 * count  # a bench, not a test: a few lost count as noise
            dists[(mode, size)] = distribution(lat)
            rows.append({"mode": mode, "size": size, **dists[(mode, size)]})
    iceoryx_note = ""
    short: List[str] = []
    try:
        iox_exe: Optional[Path] = native.program("bench/takt-bench-iceoryx")
    except native.NativeMissing as e:
        iox_exe, iceoryx_note = None, str(e)
    if iox_exe is not None:
        with roudi(native.repo_root() / "bench" / "shm" / "roudi.toml") as why:
            if why is not None:
                iceoryx_note = why
            else:
                for size in SIZES:
                    for mode in ICEORYX_MODES:
                        lat = sample(iox_exe, mode, size, count)
                        if len(lat) < count:  # the peer's losses are reported, not our failure
                            short.append(f"iceoryx-{mode} {size_label(size)}: {len(lat)} of {count} received")
                        dists[(f"iceoryx-{mode}", size)] = distribution(lat)
                        rows.append({"mode": f"iceoryx-{mode}", "size": size,
                                     **dists[(f"iceoryx-{mode}", size)]})

    def p99(mode: str, size: int) -> float:
        d = dists.get((mode, size), {})
        return d.get("p99", 0.0) if d.get("count") else 0.0

    headline: Dict[str, object] = {
        "p99_shm_over_inprocess_64B": ratio(p99("shm-block", 64), p99("inproc", 64)),
        "p99_shm_over_iceoryx_64B": ratio(p99("shm-block", 64), p99("iceoryx-block", 64)),
        "p99_4MB_over_64B": ratio(p99("shm-block", 4 << 20), p99("shm-block", 64)),
        "p99_busy_shm_over_iceoryx_64B": ratio(p99("shm-busy", 64), p99("iceoryx-busy", 64), 3),
        "p99_route_over_inprocess_64B": ratio(p99("shm-route", 64), p99("inproc", 64)),
        "p99_shm_over_udp_64B": ratio(p99("shm-block", 64), p99("udp", 64), 3),
    }
    m = machine()
    modes = [md for md in (*TAKT_MODES, *(f"iceoryx-{x}" for x in ICEORYX_MODES))
             if any((md, s) in dists for s in SIZES)]
    md = [f"# shm: publish -> callback between two processes, beside one process and iceoryx", "",
          f"Command: `{command(NAME, quick)}` on {machine_line(m)}; {count} messages per row, one every "
          "1 ms (2 ms from 1 MB), the publisher at SCHED_FIFO 70 and the receiver at 80 where permitted. "
          "The publisher stamps CLOCK_MONOTONIC into the first 8 bytes right before publishing; the "
          "receiver reads the clock when its code has the message. Latencies in µs.", ""]
    if iceoryx_note:
        md += [f"iceoryx not measured: {iceoryx_note}", ""]
    md += ["| receiver | " + " | ".join(f"{size_label(s)} p50 / p99 / max" for s in SIZES) + " |",
           "|---|" + "---:|" * len(SIZES)]
    for mode in modes:
        cells = []
        for s in SIZES:
            d = dists.get((mode, s), {"count": 0})
            cells.append(f"{us(d, 'p50')} / {us(d, 'p99')} / {us(d, 'max')}")
        md.append(f"| {LABEL[mode]} | " + " | ".join(cells) + " |")
    md += ["", "Headline: " + ", ".join(f"{k} = {v}" for k, v in headline.items()), ""]
    if short:
        md += ["Messages lost by iceoryx (its queue of 4 overflowed or a loan failed): " + "; ".join(short), ""]
    result = {"benchmark": NAME, "command": command(NAME, quick), "machine": m, "quick": quick,
              "failures": failures, "iceoryx": iceoryx_note or "measured", "iceoryx_short": short, "headline": headline,
              "rows": rows}
    write_json(out, NAME, result)
    write_markdown(out, NAME, md)
    return 0 if failures == 0 else 1
