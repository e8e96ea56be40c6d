"""Footprint of takt on a Cortex-M4, in the layout of µRT's Table 3 (`takt sizes --mcu`).

Each configuration of the feature flags (include/takt/features.h) is compiled for a Cortex-M4F
with arm-none-eabi-gcc, at -Os (release) and -Og (debug), without LTO and without garbage
collection of sections, as µRT measured; arm-none-eabi-size then reads every object file.
Flash is text + data, RAM is data + bss. A subsystem's row is the growth of the core's objects
when the subsystem is compiled in (its own file and the code it adds to the others), as µRT's
rows are; "QoS" is takt's timing validation (TAKT_WITH_TIMING: constraints, real-time classes,
statistics), which needs both publish-subscribe and RPC, so with QoS only the complete
configuration exists; with QoS every validation kind µRT has is in (the five
TAKT_WITH_TIMING_*/RPC_* flags). The table's configurations leave out what µRT does not have and a
firmware may leave out (TAKT_WITH_CHAINS, TAKT_WITH_ERROR_STRINGS); the rows after the table
give what those add, the complete configuration with every flag (as the CMake build compiles
it), and takt's own parts measured in it: the executors, the communication daemon with framing,
and the Cortex-M port (the part µRT left to ChibiOS). Last, µRT's features as a firmware links
them: a firmware test group that uses them (fw/tests/test_urt_app.c) linked with garbage
collection of sections, and what the image keeps of the core and timing layer, the executors and
the port: the floor any configuration of these sources reaches for those features.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from takt.native import build_dir, repo_root

CC = "arm-none-eabi-gcc"
SIZE = "arm-none-eabi-size"
AR = "arm-none-eabi-ar"
CPU = ["-mthumb", "-mcpu=cortex-m4", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"]
FEATURES = ["PUBSUB", "RPC", "SYNC", "TIMING", "TIMING_LATENCY", "TIMING_JITTER", "TIMING_RATE",
            "RPC_LATENCY", "RPC_JITTER", "PROFILING", "ERROR_STRINGS", "CHAINS", "TRACE"]
# takt's own, not in µRT: off in the rows of µRT's layout (a firmware's choice, takt/features.h),
# on in the "every flag" configuration the CMake build and the firmware examples use.
TAKT_ONLY = ["ERROR_STRINGS", "CHAINS", "TRACE"]

# What µRT counts (its core and subsystems; no OS): the portable port files and the core, plus
# the timing layer when it is compiled in.
CORE_FILES = ["src/port/err.c", "src/port/portable.c", "src/core/mem.c", "src/core/heap.c",
              "src/core/lock.c", "src/core/stats.c", "src/core/context.c", "src/core/topic.c",
              "src/core/timer.c", "src/core/service.c", "src/core/callback.c", "src/core/sync.c"]
TIMING_FILES = ["src/timing/timing.c"]
# takt's trace recorder: linked by a firmware that records (TAKT_WITH_TRACE and takt_trace_start);
# its Perfetto writer only by one that also writes the trace itself (a host usually does).
TRACE_FILES = ["src/core/trace.c"]
PERFETTO_FILES = ["src/core/trace_perfetto.c"]
# takt's own parts, measured in the complete configuration.
EXTRA_ROWS: List[Tuple[str, List[str]]] = [
    ("tide executor (+ shared executor code)", ["src/exec/executor.c", "src/exec/tide.c"]),
    ("batch executor", ["src/exec/batch.c"]),
    ("swi executor: preempt on NVIC (+ the port's software interrupts)",
     ["src/exec/swi.c", "src/port/cortexm/swi.c"]),
    ("daemon + framing", ["src/transport/daemon.c", "src/transport/frame.c"]),
    ("Cortex-M port (clock, sleep, UART, start-up)",
     ["src/port/cortexm/port_cortexm.c", "src/port/cortexm/uart.c", "src/port/cortexm/atomic64.c",
      "src/port/cortexm/startup.c"]),
]

# µRT's Table 3 (STM32F405, GCC 11.3.1, no GC, no LTO), bytes:
# (debug QoS on, debug QoS off, release QoS on, release QoS off).
URT_TABLE3: Dict[str, Tuple[int, int, int, int]] = {
    "Core": (3384, 3384, 2264, 2264),  # one value for both QoS settings in µRT's table
    "Synchronization": (1024, 1024, 640, 640),
    "Publish-subscribe": (7952, 6224, 4800, 3200),
    "RPC": (6296, 5592, 3952, 3184),
    "Complete": (18648, 16216, 11520, 9216),
}


class ToolchainMissing(RuntimeError):
    """arm-none-eabi-gcc or -size is not installed."""


@dataclass
class Footprint:
    flash: int = 0  # text + data
    ram: int = 0    # data + bss

    def __sub__(self, other: "Footprint") -> "Footprint":
        return Footprint(self.flash - other.flash, self.ram - other.ram)


@dataclass
class Config:
    name: str
    on: Sequence[str]  # features compiled in; the others are 0
    files: List[str] = field(default_factory=list)


def _flags(on: Sequence[str]) -> List[str]:
    return [f"-DTAKT_WITH_{f}={1 if f in on else 0}" for f in FEATURES] + ["-DTAKT_PORT_CORTEXM=1"]


def _compile(root: Path, out: Path, src: str, opt: str, on: Sequence[str],
             extra: Sequence[str] = ()) -> Path:
    # (a source of the repository by its path, one generated in out by its name)
    obj = out / ((Path(src).stem if Path(src).is_absolute() else src.replace("/", "_")) + ".o")
    cmd = [CC, *CPU, opt, "-std=c11", *_flags(on), *extra, f"-I{root / 'include'}",
           f"-I{root / 'src'}", "-c", str(root / src), "-o", str(obj)]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(f"{src} ({opt}, {'+'.join(on) or 'core'}): {res.stderr.strip()[:400]}")
    return obj


def _size(objs: List[Path]) -> Dict[str, Footprint]:
    res = subprocess.run([SIZE, "-B", *map(str, objs)], capture_output=True, text=True, check=True)
    sizes: Dict[str, Footprint] = {}
    for line in res.stdout.splitlines()[1:]:
        parts = line.split()
        text, data, bss = int(parts[0]), int(parts[1]), int(parts[2])
        sizes[parts[-1]] = Footprint(text + data, data + bss)
    return sizes


def _sum(sizes: Dict[str, Footprint], objs: List[Path]) -> Footprint:
    total = Footprint()
    for o in objs:
        f = sizes[str(o)]
        total = Footprint(total.flash + f.flash, total.ram + f.ram)
    return total


# µRT's features as a firmware links them: fw/tests/test_urt_app.c (a firmware test group that
# uses what µRT's Table 3 counts, and no timer, chain, trace or teardown) with the harness and a
# main, on the complete configuration with QoS, every object compiled with -ffunction-sections and
# the image linked with --gc-sections against the board's linker script, as fw/CMakeLists.txt
# links a firmware. What the map keeps of the core's and the timing layer's objects is the floor any
# configuration of these sources can reach for µRT's features (what no call reaches is gone).
APP_FILES = ["fw/tests/test_urt_app.c", "fw/tests/fw_check.c"]
EXEC_FILES = ["src/exec/executor.c", "src/exec/sizes.c", "src/exec/tide.c", "src/exec/batch.c",
              "src/exec/preempt.c", "src/exec/waitset.c", "src/exec/swi.c"]
PORT_FILES = ["src/port/cortexm/port_cortexm.c", "src/port/cortexm/uart.c",
              "src/port/cortexm/startup.c", "src/port/cortexm/atomic64.c",
              "src/port/cortexm/swi.c"]
APP_MAIN = """#include "fw_check.h"
int main(void) {
  test_urt_app();
  return fw_failures == 0u ? 0 : 1;
}
"""


def _kept(map_text: str) -> Dict[str, Footprint]:
    """Flash (text, rodata, data) and RAM (data, bss) of the input sections a link kept, per object,
    from its map file (after garbage collection: the discarded ones are listed before the map)."""
    body = map_text.split("Linker script and memory map", 1)[-1]
    kept: Dict[str, Footprint] = {}
    for m in re.finditer(r"^ (\.(?:text|rodata|data|bss)\S*)\s+0x[0-9a-f]+\s+0x([0-9a-f]+)\s+(\S+\.o)\)?$",
                         body, re.M):
        # an archive's member: LIB.a(MEMBER.o)
        sec, size, obj = m.group(1), int(m.group(2), 16), Path(m.group(3).split("(")[-1]).name
        f = kept.setdefault(obj, Footprint())
        if not sec.startswith(".bss"):
            f.flash += size
        if sec.startswith((".data", ".bss")):
            f.ram += size
    return kept


def linked_app(root: Path, tmp: Path, opt: str, on: Sequence[str]) -> Dict[str, Footprint]:
    """Link the µRT-like firmware (APP_FILES) at opt; flash and RAM it keeps of the core and
    timing layer, the executors and the port."""
    out = tmp / f"linked{opt}"
    out.mkdir()
    (out / "main.c").write_text(APP_MAIN)
    sections = ["-ffunction-sections", "-fdata-sections"]
    app = [f"-I{root / 'fw' / 'tests'}"]
    parts = {"core + timing": CORE_FILES + TIMING_FILES, "executors": EXEC_FILES, "port": PORT_FILES}
    objs: Dict[str, List[Path]] = {k: [_compile(root, out, f, opt, on, sections) for f in fs]
                                   for k, fs in parts.items()}
    app_objs = [_compile(root, out, f, opt, on, sections + app) for f in APP_FILES]
    app_objs.append(_compile(root, out, str(out / "main.c"), opt, on, sections + app))
    # as fw/CMakeLists.txt links: the port's objects whole (its handlers are reached from the
    # vector table only), the core and the executors from static libraries (a member nothing
    # refers to stays out: an executor kind the firmware does not name)
    libs = []
    for k in ("executors", "core + timing"):
        lib = out / ("lib" + k.split()[0] + ".a")
        subprocess.run([AR, "rcs", str(lib), *map(str, objs[k])], check=True, capture_output=True)
        libs.append(str(lib))
    elf, mp = out / "urt_app.elf", out / "urt_app.map"
    cmd = [CC, *CPU, "--specs=nano.specs", "-nostartfiles", "-Wl,--gc-sections",
           f"-L{root / 'src' / 'port' / 'cortexm'}", f"-T{root / 'src' / 'port' / 'cortexm' / 'mps2-an386.ld'}",
           f"-Wl,-Map={mp}", *map(str, app_objs), *map(str, objs["port"]),
           "-Wl,--start-group", *libs, "-Wl,--end-group", "-o", str(elf), "-lc", "-lm", "-lgcc"]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(f"linking {APP_FILES[0]} ({opt}): {res.stderr.strip()[:600]}")
    kept = _kept(mp.read_text())
    result: Dict[str, Footprint] = {}
    for k, os_ in objs.items():
        t = Footprint()
        for o in os_:
            f = kept.get(o.name, Footprint())
            t = Footprint(t.flash + f.flash, t.ram + f.ram)
        result[k] = t
    return result


ALL_TIMING = ["TIMING", "TIMING_LATENCY", "TIMING_JITTER", "TIMING_RATE", "RPC_LATENCY", "RPC_JITTER"]


def configurations() -> List[Config]:
    base = ["PROFILING"]  # as µRT measured: profiling enabled; takt's own flags off
    return [
        Config("core", base),
        Config("sync", base + ["SYNC"]),
        Config("pubsub", base + ["PUBSUB"]),
        Config("rpc", base + ["RPC"]),
        Config("complete", base + ["SYNC", "PUBSUB", "RPC"]),
        Config("complete_qos", base + ["SYNC", "PUBSUB", "RPC"] + ALL_TIMING),
        Config("everything", base + ["SYNC", "PUBSUB", "RPC"] + ALL_TIMING + TAKT_ONLY),
        # a firmware that validates latency only (µRT's other kinds compiled out)
        Config("qos_latency", base + ["SYNC", "PUBSUB", "RPC", "TIMING", "TIMING_LATENCY", "RPC_LATENCY"]),
    ] + [Config("qos+" + f, base + ["SYNC", "PUBSUB", "RPC"] + ALL_TIMING + [f]) for f in TAKT_ONLY]


def measure(jobs: int = 2) -> dict:
    """Compile every configuration at -Os and -Og and return the table as plain data."""
    if shutil.which(CC) is None or shutil.which(SIZE) is None:
        raise ToolchainMissing(f"{CC} not found: run tools/deps.sh (gcc-arm-none-eabi, libnewlib-arm-none-eabi)")
    root = repo_root()
    configs = configurations()
    extra_files = [f for _, fs in EXTRA_ROWS for f in fs]
    result: dict = {"target": "Cortex-M4F (" + " ".join(CPU) + ")",
                    "compiler": subprocess.run([CC, "-dumpversion"], capture_output=True,
                                               text=True).stdout.strip(),
                    "builds": {}}
    with tempfile.TemporaryDirectory(prefix="takt-sizes-") as tmp:
        tasks = []
        for opt in ("-Os", "-Og"):
            for c in configs:
                out = Path(tmp) / f"{opt[1:]}-{c.name}"
                out.mkdir()
                files = CORE_FILES + (TIMING_FILES if "TIMING" in c.on else [])
                if "TRACE" in c.on:
                    files = files + TRACE_FILES
                if c.name == "everything":
                    files = files + extra_files + PERFETTO_FILES
                tasks += [(opt, c, out, f) for f in files]
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            objs = list(pool.map(lambda t: (t[0], t[1].name, t[3], _compile(root, t[2], t[3], t[0], t[1].on)),
                                 tasks))
        sizes = _size([o for *_, o in objs])
        for opt in ("-Os", "-Og"):
            per: Dict[str, Dict[str, Footprint]] = {}
            for o_opt, cname, src, obj in objs:
                if o_opt == opt:
                    per.setdefault(cname, {})[src] = sizes[str(obj)]
            def total(cname: str, files: List[str]) -> Footprint:
                fs = per[cname]
                t = Footprint()
                for f in files:
                    if f in fs:
                        t = Footprint(t.flash + fs[f].flash, t.ram + fs[f].ram)
                return t
            counted = CORE_FILES + TIMING_FILES
            core = total("core", counted)
            rows = {
                "Core": {"qos_off": core},
                "Synchronization": {"qos_off": total("sync", counted) - core},
                "Publish-subscribe": {"qos_off": total("pubsub", counted) - core},
                "RPC": {"qos_off": total("rpc", counted) - core},
                "Complete": {"qos_off": total("complete", counted),
                             "qos_on": total("complete_qos", counted)},
            }
            extras = {name: total("everything", fs) for name, fs in EXTRA_ROWS}
            extras["timing validation (timing.c, as in the table)"] = total("complete_qos", TIMING_FILES)
            for f, what in (("CHAINS", "chains"), ("TRACE", "trace points + recorder"),
                            ("ERROR_STRINGS", "error sentences")):
                extras[f"{what} (TAKT_WITH_{f}: what it adds)"] = (
                    total("qos+" + f, counted + TRACE_FILES) - total("complete_qos", counted))
            extras["Perfetto writer (trace_perfetto.c, if it writes)"] = (
                total("everything", PERFETTO_FILES))
            extras["complete with QoS and every takt flag (the CMake build)"] = total(
                "everything", counted + TRACE_FILES)
            extras["complete with QoS of latency only (no jitter, no rate validation)"] = (
                total("qos_latency", counted))
            result["builds"]["release" if opt == "-Os" else "debug"] = {
                "opt": opt,
                "rows": {k: {q: vars(f) for q, f in v.items()} for k, v in rows.items()},
                "extra": {k: vars(v) for k, v in extras.items()},
            }
        qos = {x.name: x for x in configs}["complete_qos"].on
        for opt in ("-Os", "-Og"):
            got = linked_app(root, Path(tmp), opt, qos)
            result["builds"]["release" if opt == "-Os" else "debug"]["linked"] = {
                k: vars(v) for k, v in got.items()}
    result["urt_table3"] = {k: list(v) for k, v in URT_TABLE3.items()}
    entities, why = entity_sizes()
    result["entities"] = entities
    if entities is None:
        result["entities_missing"] = why
    return result


def entity_sizes() -> Tuple[Optional[dict], str]:
    """The per-entity table measured on the 32-bit target: the firmware takt-fw-sizes (built by
    the main build) run in QEMU. (None, why) when it cannot run."""
    elf = build_dir() / "fw" / "mps2-an386" / "takt-fw-sizes.elf"
    qemu = shutil.which("qemu-system-arm")
    if qemu is None:
        return None, "qemu-system-arm not installed (tools/deps.sh)"
    if not elf.is_file():
        return None, f"{elf} not built (make)"
    res = subprocess.run([qemu, "-M", "mps2-an386", "-display", "none", "-monitor", "none",
                          "-serial", "stdio", "-semihosting-config", "enable=on,target=native",
                          "-kernel", str(elf)], capture_output=True, text=True, timeout=60)
    if res.returncode != 0:
        return None, f"{elf.name} exited with {res.returncode}: {res.stdout.strip()[-200:]}"
    line = next((ln for ln in res.stdout.splitlines() if ln.startswith("{")), "")
    return json.loads(line), ""


def _cell(row: dict, q: str, what: str) -> str:
    return f"{row[q][what]:,}" if q in row else "—"


def format_table(r: dict) -> str:
    rel, dbg = r["builds"]["release"], r["builds"]["debug"]
    lines = [f"takt on {r['target']}, arm-none-eabi-gcc {r['compiler']}, no LTO, no GC of sections",
             "flash = text + data, bytes (RAM = data + bss in parentheses); µRT's Table 3 below each",
             "",
             f"{'':26}{'debug (-Og)':>34}{'release (-Os)':>34}",
             f"{'':26}{'QoS enabled':>17}{'QoS disabled':>17}{'QoS enabled':>17}{'QoS disabled':>17}"]
    for name in ["Core", "Synchronization", "Publish-subscribe", "RPC", "Complete"]:
        cells = []
        for build in (dbg, rel):
            row = build["rows"][name]
            for q in ("qos_on", "qos_off"):
                cells.append(f"{_cell(row, q, 'flash')} ({_cell(row, q, 'ram')})" if q in row else "—")
        lines.append(f"{name:26}" + "".join(f"{c:>17}" for c in cells))
        urt = r["urt_table3"][name]
        lines.append(f"{'  µRT':26}" + "".join(f"{v:>17,}" for v in urt))
    lines += ["", "takt's own parts (complete configuration with QoS and every takt flag):",
              f"{'':66}{'debug (-Og)':>16}{'release (-Os)':>16}"]
    for name in dbg["extra"]:
        d, s = dbg["extra"][name], rel["extra"][name]
        lines.append(f"{name:66}{d['flash']:>16,}{s['flash']:>16,}")
    lines.append("(a subsystem's row: how much the core's objects grow when it is compiled in; "
                 "QoS needs publish-subscribe and RPC, so only Complete has it; QoS is all five of "
                 "µRT's validation kinds; the table's rows are without takt's own flags "
                 + ", ".join("TAKT_WITH_" + f for f in TAKT_ONLY) + ")")
    lines += ["", "µRT's features as a firmware links them (fw/tests/test_urt_app.c on the complete "
              "configuration with QoS, -ffunction-sections and --gc-sections: what no call reaches is gone):",
              f"{'':66}{'debug (-Og)':>16}{'release (-Os)':>16}"]
    for name in dbg["linked"]:
        d, s = dbg["linked"][name], rel["linked"][name]
        lines.append(f"{name + ' (RAM: ' + format(s['ram'], ',') + ')':66}{d['flash']:>16,}{s['flash']:>16,}")
    lines.append(f"{'  µRT: Complete with QoS (no GC: its whole objects)':66}"
                 f"{r['urt_table3']['Complete'][0]:>16,}{r['urt_table3']['Complete'][2]:>16,}")
    ent = r.get("entities")
    lines.append("")
    if ent is None:
        lines.append(f"memory per entity on the 32-bit target: not measured ({r.get('entities_missing')})")
    else:
        lines.append(f"memory per entity on the 32-bit target (mps2-an386 in QEMU, "
                     f"{ent['pointer_bytes'] * 8}-bit pointers), beside µRT's Table 2:")
        lines.append(f"{'entity':32}{'bytes':>7}  {'counted as':48}µRT Table 2")
        for row in ent["rows"]:
            lines.append(f"{row['entity']:32}{row['bytes']:>7}  {row['counted']:48}{row['urt_table2']}")
    return "\n".join(lines)


def jobs_default() -> int:
    return min(2, os.cpu_count() or 1)


def symbols(config: str = "complete_qos", opt: str = "-Os", n: int = 30) -> List[Tuple[int, str, str, str]]:
    """The n largest symbols (bytes, nm type, name, source file) of the objects counted in µRT's
    layout, for one configuration and optimisation level: where the bytes of a row are."""
    if shutil.which(CC) is None:
        raise ToolchainMissing(f"{CC} not found: run tools/deps.sh (gcc-arm-none-eabi, libnewlib-arm-none-eabi)")
    root = repo_root()
    c = {x.name: x for x in configurations()}[config]
    files = CORE_FILES + (TIMING_FILES if "TIMING" in c.on else [])
    rows: List[Tuple[int, str, str, str]] = []
    with tempfile.TemporaryDirectory(prefix="takt-sizes-") as tmp:
        for f in files:
            obj = _compile(root, Path(tmp), f, opt, c.on)
            out = subprocess.run(["arm-none-eabi-nm", "--size-sort", "-S", str(obj)],
                                 capture_output=True, text=True, check=True).stdout
            for line in out.splitlines():
                parts = line.split()
                if len(parts) == 4:
                    rows.append((int(parts[1], 16), parts[2], parts[3], f))
    rows.sort(key=lambda r: -r[0])
    return rows[:n]


if __name__ == "__main__":
    # python -m takt.mcu_sizes [CONFIG [-Os|-Og [N]]]: the largest symbols of a configuration
    import sys
    a = sys.argv[1:]
    for size, kind, name, src in symbols(a[0] if a else "complete_qos", a[1] if len(a) > 1 else "-Os",
                                         int(a[2]) if len(a) > 2 else 30):
        print(f"{size:6} {kind} {name:44} {src}")
