"""The benchmarks `takt bench NAME` knows, by name. Each module has NAME and
run(quick: bool, out: Path) -> int (0 on success), and writes out/NAME.json and out/NAME.md."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Dict, List

from takt.bench import detection, pods, rosrt, scale, serialize, tide_overhead, trace, urt
from takt.bench import ros1
from takt.bench import shm
from takt.bench import dds
from takt.bench import frames

BENCHMARKS: Dict[str, ModuleType] = {m.NAME: m for m in (tide_overhead, urt, detection, serialize, pods, rosrt,
                                                          scale, trace,
                                                          ros1,
                                                          shm,
                                                          dds,
                                                          frames)}
NAMES: List[str] = list(BENCHMARKS)


def run(name: str, quick: bool, out: Path, mcu: bool = False) -> int:
    """Run the benchmark called name (one of NAMES); mcu: its microcontroller variant (pods)."""
    if mcu:
        if not hasattr(BENCHMARKS[name], "run_mcu"):
            raise ValueError(f"benchmark '{name}' has no --mcu variant (pods has)")
        return BENCHMARKS[name].run_mcu(quick, out)
    return BENCHMARKS[name].run(quick, out)
