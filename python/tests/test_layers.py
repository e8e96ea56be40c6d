"""tools/lint/check_layers.py: the layering check finds includes of a layer above, and private
headers included from public headers or tools, on a small tree made here; and the real tree
passes."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.release_pass  # pyproject.toml

ROOT = Path(__file__).resolve().parents[2]
CHECK = ROOT / "tools" / "lint" / "check_layers.py"


def run(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(CHECK), str(root)], capture_output=True, text=True)


def make_tree(tmp: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = tmp / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    for d in ("tools", "bench", "examples"):
        (tmp / d).mkdir(exist_ok=True)
    return tmp


def test_the_tree_keeps_its_layers():
    r = run(ROOT)
    assert r.returncode == 0, r.stdout + r.stderr


def test_a_lower_layer_including_a_higher_one_is_named(tmp_path):
    tree = make_tree(tmp_path, {
        "include/takt/core.h": "#pragma once\n",
        "include/takt/exec.h": '#include "takt/core.h"\n',
        "src/exec/exec_impl.h": '#include "../core/entities.h"\n',
        "src/core/entities.h": "\n",
        "src/core/topic.c": '#include "entities.h"\n#include "../exec/exec_impl.h"\n#include "takt/exec.h"\n',
    })
    r = run(tree)
    assert r.returncode == 1
    assert "src/core/topic.c:2: core includes src/exec/exec_impl.h of the layer above it" in r.stdout
    assert "src/core/topic.c:3: core includes takt/exec.h of the exec layer above it" in r.stdout
    assert "exec_impl.h:1" not in r.stdout  # exec may include core's private headers


def test_private_headers_stay_private(tmp_path):
    tree = make_tree(tmp_path, {
        "include/takt/core.h": '#include "../../src/core/entities.h"\n',
        "src/core/entities.h": "\n",
        "tools/sizes/sizes.c": '#include "../../src/core/entities.h"\n',
    })
    r = run(tree)
    assert r.returncode == 1
    assert "include/takt/core.h:1: includes the private header src/core/entities.h" in r.stdout
    assert "tools/sizes/sizes.c:1: includes the private header src/core/entities.h" in r.stdout


def test_a_public_header_without_a_layer_is_reported(tmp_path):
    tree = make_tree(tmp_path, {"include/takt/new_thing.h": "\n", "src/core/x.c": "\n"})
    r = run(tree)
    assert r.returncode == 1
    assert "include/takt/new_thing.h: no layer assigned" in r.stdout
