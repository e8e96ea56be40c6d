import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# the native build under test: the release build, or the one TAKT_BUILD_DIR names (sanitizers)
BUILD = Path(os.environ.get("TAKT_BUILD_DIR", REPO / "build" / "release"))


@pytest.fixture
def takt(tmp_path):
    """Run `takt ARGS...` (this package's CLI) and return the CompletedProcess."""

    def call(*args, check=False):
        env = dict(os.environ)
        env.setdefault("TAKT_BUILD_DIR", str(REPO / "build" / "release"))
        proc = subprocess.run([sys.executable, "-m", "takt", *map(str, args)], capture_output=True,
                              text=True, env=env, cwd=tmp_path, timeout=120)
        if check:
            assert proc.returncode == 0, proc.stderr
        return proc

    return call


@pytest.fixture
def write(tmp_path):
    def make(name, text):
        p = tmp_path / name
        p.write_text(text)
        return p

    return make
