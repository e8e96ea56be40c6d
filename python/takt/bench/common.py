"""What every benchmark shares: the machine description, distributions and fits, cyclictest,
running a native benchmark program, and writing NAME.json + NAME.md."""

from __future__ import annotations

import contextlib
import json
import math
import os
import platform
import shutil
import statistics
import struct
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Sequence, Tuple


class BenchFailed(RuntimeError):
    """A native benchmark program exited with an error (its stderr has been passed through)."""


def machine() -> Dict[str, object]:
    """CPU count and model, kernel and Python version of this machine."""
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


def machine_line(m: Dict[str, object]) -> str:
    """'2 CPUs (model, kernel x)' as every report's first line names the machine."""
    return f"{m['cpus']} CPUs ({m['cpu_model']}, kernel {m['kernel']})"


def percentiles(v: Sequence[float]) -> Dict[str, float]:
    """count, min, p50, p90, p99, p99.9 and max of a non-empty sample (nearest rank)."""
    s = sorted(v)
    n = len(s)
    pick = lambda q: s[min(n - 1, int(q * (n - 1) + 0.5))]
    return {"count": n, "min": s[0], "p50": pick(0.5), "p90": pick(0.9), "p99": pick(0.99),
            "p999": pick(0.999), "max": s[-1]}


def distribution(v: Sequence[float]) -> Dict[str, float]:
    """percentiles() plus p1 and the mean (ROS^RT's jitter table); {"count": 0} when empty."""
    if not v:
        return {"count": 0}
    d = percentiles(v)
    s = sorted(v)
    d.update({"p1": s[min(len(s) - 1, int(0.01 * (len(s) - 1) + 0.5))], "mean": statistics.fmean(v)})
    return d


def us(d: Dict[str, float], k: str) -> str:
    """d[k] (ns) in µs with one decimal, or n/a for an empty distribution."""
    return f"{d[k] / 1e3:.1f}" if d.get("count") else "n/a"


def slope(x0: float, y0: float, x1: float, y1: float) -> float:
    """Growth exponent between two points on a log-log plot (0 = flat, 1 = linear)."""
    if min(x0, y0, x1, y1) <= 0 or x0 == x1:
        return float("nan")
    return math.log(y1 / y0) / math.log(x1 / x0)


def fit_line(xs: List[float], ys: List[float]) -> Tuple[float, float, float]:
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


def exponent(xs: List[float], ys: List[float]) -> float:
    """Slope of log y against log x (1 = linear, 2 = quadratic)."""
    lx = [math.log(x) for x in xs]
    ly = [math.log(max(y, 1.0)) for y in ys]
    return fit_line(lx, ly)[1]


def run_native(exe: Path, args: List[str], timeout: float = 900) -> dict:
    """Run a benchmark program and parse the JSON it prints; BenchFailed if it fails or is not
    done within timeout seconds (then it is killed)."""
    try:
        proc = subprocess.run([str(exe)] + args, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        raise BenchFailed(f"{exe.name} {' '.join(args)}: not done within {timeout:.0f} s, killed") from e
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
        raise BenchFailed(f"{exe.name} failed (exit {proc.returncode})")
    return json.loads(proc.stdout)


def run_json(argv: List[str], timeout: float, ok: Sequence[int] = (0,)) -> Tuple[Optional[dict], List[str]]:
    """A one-shot program of a benchmark: its last line of output as JSON, or None and why not.
    ok: the exit codes whose output counts (a program may exit 3 with fewer samples than asked)."""
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, ["timed out"]
    if r.returncode not in ok or not r.stdout.strip():
        return None, r.stderr.strip().splitlines()[-1:] or [f"exit {r.returncode}"]
    try:
        return json.loads(r.stdout.strip().splitlines()[-1]), []
    except json.JSONDecodeError as e:
        return None, [f"not JSON: {e}"]


def cyclictest(count: int, prio: int, interval_us: int = 1000) -> List[float]:
    """cyclictest at SCHED_FIFO prio and an interval: wake-up latencies in ns (µs resolution);
    wake-ups beyond its 20 ms histogram count as 20 ms (a lower bound); empty if cyclictest is
    not installed."""
    exe = shutil.which("cyclictest")
    if exe is None:
        return []
    proc = subprocess.run([exe, "-m", "-q", "-p", str(prio), "-i", str(interval_us), "-l", str(count), "-h", "20000"],
                          capture_output=True, text=True)
    if proc.returncode != 0:  # installed but failed (not root for -p/-m): said, not taken for absent
        why = (proc.stderr.strip().splitlines() or [f"status {proc.returncode}"])[-1]
        print(f"takt bench: cyclictest failed ({why}): no OS floor in this run", file=sys.stderr)
        return []
    samples: List[float] = []
    for line in proc.stdout.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0].isdigit() and parts[1].isdigit():
            samples += [float(parts[0]) * 1000.0] * int(parts[1])
        elif line.startswith("# Histogram Overflows:"):
            samples += [20000 * 1000.0] * sum(int(x) for x in line.split(":")[1].split())
    return samples


def steal_ticks() -> Optional[int]:
    """CPU time the hypervisor gave to others while this machine's CPUs wanted to run, in clock
    ticks summed over the CPUs (the `steal` column of /proc/stat); None where there is none."""
    try:
        with open("/proc/stat") as f:
            fields = f.readline().split()
        return int(fields[8]) if fields[0] == "cpu" and len(fields) > 8 else None
    except OSError:
        return None


def pyplot():
    """matplotlib.pyplot with the file-only backend, or None if matplotlib is not installed."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    return plt


def write_json(out: Path, name: str, result: Dict[str, object]) -> Path:
    """Write out/NAME.json (creating out) and return its path."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{name}.json"
    path.write_text(json.dumps(result, indent=2) + "\n")
    return path


def write_markdown(out: Path, name: str, md: List[str], echo: bool = True) -> Path:
    """Write the lines to out/NAME.md, print them unless echo is False, and return the path."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{name}.md"
    path.write_text("\n".join(md))
    if echo:
        print("\n".join(md))
    return path


def command(name: str, quick: bool) -> str:
    """The command line that reproduces a result."""
    return f"takt bench {name}" + (" --quick" if quick else "")


def ratio(a: float, b: float, digits: int = 2) -> Optional[float]:
    """a / b rounded, None when b is not positive."""
    return round(a / b, digits) if b > 0 else None


def stress_ng_path() -> Optional[str]:
    """The stress-ng program, or None if it is not installed."""
    return shutil.which("stress-ng")


@contextlib.contextmanager
def stress_ng(args: List[str], timeout_s: int, temp_dir: Optional[Path] = None) -> Iterator[Optional[subprocess.Popen]]:
    """Run `stress-ng ARGS --timeout Ns --quiet` (at SCHED_OTHER, as started) for the duration of
    the with-block; its files go to temp_dir if given. Yields the process, or None if stress-ng is
    not installed. The timeout bounds it even if this process dies; on leaving the block it is
    sent SIGTERM (it removes its files) and waited for."""
    exe = stress_ng_path()
    if exe is None:
        yield None
        return
    cmd = [exe, *args, "--timeout", f"{int(timeout_s)}s", "--quiet"]
    if temp_dir is not None:
        cmd += ["--temp-path", str(temp_dir)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            cwd=str(temp_dir) if temp_dir is not None else None)
    try:
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class Neighbours:
    """What other processes do on this machine while a benchmark runs (other builds and tests on
    a shared machine): sample() between runs records the CPU time each process outside this
    process's own tree used since the previous sample, and the load average. A process that both
    started and ended between two samples is not seen."""

    def __init__(self) -> None:
        self._tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
        self._prev = self._cpu_times()
        self._t_prev = time.monotonic()
        self.samples: List[Dict[str, object]] = []

    def _cpu_times(self) -> Dict[Tuple[int, int], Tuple[str, float]]:
        """(pid, start time) -> (name, CPU seconds) of every process not in this process's tree
        (kernel workers rename themselves: a process is known by its pid and start time)."""
        stats: Dict[Tuple[int, int], Tuple[str, int, float]] = {}
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                text = stat.read_text()
            except OSError:
                continue
            name = text[text.index("(") + 1:text.rindex(")")]
            fields = text[text.rindex(")") + 2:].split()
            # fields[1] = ppid, [11] utime, [12] stime, [19] start time (man 5 proc, from field 3)
            key = (int(stat.parent.name), int(fields[19]))
            stats[key] = (name, int(fields[1]), (int(fields[11]) + int(fields[12])) / self._tick)
        own = {os.getpid()}
        grew = True
        while grew:  # this process's descendants
            more = {key[0] for key, (_, ppid, _) in stats.items() if ppid in own} - own
            own |= more
            grew = bool(more)
        return {key: (name, cpu) for key, (name, _, cpu) in stats.items() if key[0] not in own}

    def sample(self) -> None:
        now_times, now = self._cpu_times(), time.monotonic()
        used: Dict[str, float] = {}
        for key, (name, cpu) in now_times.items():
            prev = self._prev.get(key)
            d = cpu - prev[1] if prev is not None else cpu  # new: it started since the last sample
            if d > 0:
                used[name] = used.get(name, 0.0) + d
        try:
            load = float(Path("/proc/loadavg").read_text().split()[0])
        except OSError:
            load = float("nan")
        self.samples.append({"interval_s": now - self._t_prev, "cpu_s": used, "loadavg_1min": load})
        self._prev, self._t_prev = now_times, now

    def summary(self) -> Dict[str, object]:
        """The share of the machine's CPU time other processes used, how many intervals they used
        more than a tenth of it in, the busiest of them, and the load average's range."""
        cpus = os.cpu_count() or 1
        wall = sum(s["interval_s"] for s in self.samples)
        by_name: Dict[str, float] = {}
        busy = 0
        for s in self.samples:
            total = sum(s["cpu_s"].values())
            if s["interval_s"] > 0 and total / (s["interval_s"] * cpus) > 0.1:
                busy += 1
            for name, cpu in s["cpu_s"].items():
                by_name[name] = by_name.get(name, 0.0) + cpu
        other = sum(by_name.values())
        loads = [s["loadavg_1min"] for s in self.samples if s["loadavg_1min"] == s["loadavg_1min"]]
        top = sorted(by_name.items(), key=lambda kv: -kv[1])[:6]
        return {"samples": len(self.samples), "wall_s": round(wall, 1), "other_cpu_s": round(other, 1),
                "other_share": round(other / (wall * cpus), 3) if wall > 0 else None,
                "intervals_over_10pct": busy, "busiest": {k: round(v, 1) for k, v in top},
                "loadavg_1min_min": min(loads, default=None), "loadavg_1min_max": max(loads, default=None)}


def git_commit(root: Path) -> Dict[str, object]:
    """The commit the source tree is at and whether it has local changes (empty if not a checkout)."""
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, check=True).stdout.strip() != ""
    except (OSError, subprocess.CalledProcessError):
        return {}
    return {"commit": head, "dirty": dirty}


@contextlib.contextmanager
def cpu_latency_held() -> Iterator[bool]:
    """Hold /dev/cpu_dma_latency at 0 while the block runs: the PM QoS request that takt's
    real-time set-up (takt_port_realtime_setup) and cyclictest make, which keeps idle CPUs in
    their shallowest state (here: the haltpoll governor's polling state). The request is
    system-wide, so a benchmark that holds it around every cell runs takt and the programs it is
    compared with (roscpp, rospy, ddsperf, rclpy, ...) on a machine in one state, rather than
    takt's cells with it and the others' without. Yields whether it is held (root only)."""
    try:
        fd = os.open("/dev/cpu_dma_latency", os.O_WRONLY | os.O_CLOEXEC)
    except OSError:
        yield False
        return
    try:
        try:
            held = os.write(fd, struct.pack("i", 0)) == 4
        except OSError:
            held = False
        yield held
    finally:
        os.close(fd)
