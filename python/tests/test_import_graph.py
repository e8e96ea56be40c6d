"""The takt package's modules import each other without cycles, and no module imports another
module's private (_name) helpers. The graph is read from the source with `ast`: every import
statement counts, including those inside functions (a late import hides a cycle, it does not
remove it)."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, List, Optional, Set, Tuple

import pytest

pytestmark = pytest.mark.release_pass  # pyproject.toml

PACKAGE = Path(__file__).resolve().parents[1] / "takt"


def module_files(root: Path) -> Dict[str, Path]:
    """Dotted module name -> file, for every .py file of the package at root."""
    mods: Dict[str, Path] = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        mods[".".join(parts)] = path
    return mods


def _resolve(importer: str, is_package: bool, level: int, module: Optional[str]) -> str:
    """The absolute name of `from <level dots><module> import ...` written in importer."""
    if level == 0:
        return module or ""
    base = importer.split(".")
    if not is_package:
        base = base[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([module] if module else []))


def imports(root: Path) -> Tuple[Dict[str, Set[str]], List[str]]:
    """(edges: module -> package modules it imports, private names imported across modules)."""
    mods = module_files(root)
    edges: Dict[str, Set[str]] = {m: set() for m in mods}
    private: List[str] = []
    for name, path in mods.items():
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name in mods:
                        edges[name].add(alias.name)
            elif isinstance(node, ast.ImportFrom):
                target = _resolve(name, is_package, node.level, node.module)
                for alias in node.names:
                    sub = f"{target}.{alias.name}"
                    if sub in mods:  # `from pkg import module`
                        edges[name].add(sub)
                    elif target in mods:
                        edges[name].add(target)
                        if alias.name.startswith("_") and target != name:
                            private.append(f"{name} imports {target}.{alias.name}")
    for m in edges:
        edges[m].discard(m)
    return edges, private


def find_cycle(edges: Dict[str, Set[str]]) -> Optional[List[str]]:
    """One cycle as [a, b, ..., a], or None (depth-first search, deterministic order)."""
    state: Dict[str, int] = {}  # 1: on the current path, 2: done
    stack: List[str] = []

    def visit(m: str) -> Optional[List[str]]:
        state[m] = 1
        stack.append(m)
        for n in sorted(edges.get(m, ())):
            if state.get(n) == 1:
                return stack[stack.index(n):] + [n]
            if n not in state:
                found = visit(n)
                if found:
                    return found
        stack.pop()
        state[m] = 2
        return None

    for m in sorted(edges):
        if m not in state:
            found = visit(m)
            if found:
                return found
    return None


def test_takt_imports_have_no_cycle():
    edges, _ = imports(PACKAGE)
    assert "takt.cli" in edges and edges["takt.cli"], "the import graph was not read"
    cycle = find_cycle(edges)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_no_private_helper_is_imported_across_modules():
    _, private = imports(PACKAGE)
    assert not private, "; ".join(private)


def test_every_benchmark_is_registered_and_has_a_runner():
    from takt.bench import registry

    files = {p.stem for p in (PACKAGE / "bench").glob("*.py")} - {"__init__", "common", "registry"}
    assert set(registry.NAMES) == files
    for name, module in registry.BENCHMARKS.items():
        assert module.NAME == name and callable(module.run)


def _package(tmp_path: Path, files: Dict[str, str]) -> Path:
    root = tmp_path / "pkg"
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


def test_a_cycle_through_a_late_import_is_found_and_named(tmp_path):
    root = _package(tmp_path, {
        "__init__.py": "",
        "cli.py": "from pkg import demo\n",
        "demo.py": "def run():\n    from pkg.cli import main\n",
        "sub/__init__.py": "",
        "sub/a.py": "from . import b\n",
        "sub/b.py": "from ..sub import c\n",
        "sub/c.py": "import pkg.sub.a\n",
    })
    edges, _ = imports(root)
    assert edges["pkg.sub.a"] == {"pkg.sub.b"} and edges["pkg.sub.b"] == {"pkg.sub.c"}
    assert find_cycle(edges) == ["pkg.cli", "pkg.demo", "pkg.cli"]
    del edges["pkg.cli"]
    assert find_cycle(edges) == ["pkg.sub.a", "pkg.sub.b", "pkg.sub.c", "pkg.sub.a"]


def test_private_helpers_imported_across_modules_are_reported(tmp_path):
    root = _package(tmp_path, {"__init__.py": "", "a.py": "def _helper(): pass\n",
                               "b.py": "from pkg.a import _helper\n"})
    assert imports(root)[1] == ["pkg.b imports pkg.a._helper"]
