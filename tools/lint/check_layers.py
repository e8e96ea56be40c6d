#!/usr/bin/env python3
"""Check takt's layering: no file includes a header of a layer above its own.

Layers, lowest first (docs/architecture.md): port, core, timing, exec, transport, shm, ros1, dds,
introspect, system, roscpp (the roscpp-compatible C++ API, include/ros/).
A file under src/<layer>/ may include the private headers of its own layer and of the layers
below, and the public headers (include/takt/*) of those layers. A public header may include
only public headers of its own layer and below, and nothing private. tools/, bench/, examples/
and tests/ are above every layer but reach private headers only where they are tests.

Usage: check_layers.py [ROOT]   (exit 1 and one line per violation when the rule is broken)
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

LAYERS = ["port", "core", "timing", "exec", "transport", "shm", "ros1", "dds", "introspect", "system",
          "roscpp"]
RANK = {name: i for i, name in enumerate(LAYERS)}

# The layer each public header belongs to.
PUBLIC = {
    "err.h": "port", "features.h": "port", "config.h": "port", "clock.h": "port",
    "port.h": "port", "port_io.h": "port", "port_types.h": "port", "cortexm.h": "port",
    "port_shm.h": "port",
    "port": "port", "port/posix.h": "port", "port/cortexm.h": "port",  # each port's type sizes
    "core.h": "core", "stats.h": "core", "sync.h": "core", "wire.h": "core", "msg.hpp": "core",
    "trace.h": "core",
    "timing.h": "timing",
    "exec.h": "exec", "sizes.h": "exec", "takt.h": "exec",
    "frame.h": "transport", "link.h": "transport", "daemon.h": "transport",
    "bridge.h": "transport", "bridge_backend.h": "transport",
    "shm.h": "shm",
    "ros1.h": "ros1",
    "dds.h": "dds",
    "introspect.h": "introspect",
    "system.h": "system",
}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
SOURCES = (".c", ".h", ".cpp", ".hpp", ".in")


def layer_of_private(target: Path, src: Path) -> str | None:
    """The layer of a private header (a path under src/), or None if it is not one."""
    try:
        rel = target.resolve().relative_to(src.resolve())
    except ValueError:
        return None
    return rel.parts[0] if rel.parts and rel.parts[0] in RANK else None


def check(root: Path) -> list[str]:
    src, inc = root / "src", root / "include" / "takt"
    problems: list[str] = []
    unknown_public = sorted(p.name.removesuffix(".in") for p in inc.glob("*")
                            if p.name.removesuffix(".in") not in PUBLIC)
    for name in unknown_public:
        problems.append(f"include/takt/{name}: no layer assigned (add it to PUBLIC in {Path(__file__).name})")

    def rule(path: Path, own: str | None, may_private: bool) -> None:
        text = path.read_text(errors="replace")
        for lineno, line in enumerate(text.splitlines(), 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            name = m.group(1)
            where = f"{path.relative_to(root)}:{lineno}"
            if name.startswith("takt/"):
                header = name[len("takt/"):]
                layer = PUBLIC.get(header)
                if layer is None:
                    if not (root / "include" / name).exists() and header not in unknown_public:
                        continue  # generated elsewhere (e.g. message headers)
                    continue
                if own is not None and RANK[layer] > RANK[own]:
                    problems.append(f"{where}: {own} includes takt/{header} of the {layer} layer above it")
                continue
            target = (path.parent / name)
            layer = layer_of_private(target, src) if target.exists() else None
            if layer is None:
                continue  # a header of its own folder outside src/, or generated
            if not may_private:
                problems.append(f"{where}: includes the private header src/{target.resolve().relative_to(src.resolve())}")
            elif own is not None and RANK[layer] > RANK[own]:
                problems.append(f"{where}: {own} includes src/{layer}/{target.name} of the layer above it")

    for path in sorted(src.rglob("*")):
        if path.suffix in SOURCES and path.is_file():
            own = path.relative_to(src).parts[0]
            if own in RANK:
                rule(path, own, may_private=True)
    for path in sorted(inc.glob("*")):
        if path.suffix in SOURCES:
            own = PUBLIC.get(path.name.removesuffix(".in"))
            rule(path, own, may_private=False)
    for top in ("tools", "bench", "examples"):
        for path in sorted((root / top).rglob("*")):
            if path.suffix in SOURCES and path.is_file():
                rule(path, None, may_private=False)
    return problems


def main(argv: list[str]) -> int:
    root = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parents[2]
    problems = check(root)
    for p in problems:
        print(p)
    if problems:
        print(f"check_layers: {len(problems)} include(s) break the layering", file=sys.stderr)
        return 1
    print(f"check_layers: the layering holds ({', '.join(LAYERS)})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
