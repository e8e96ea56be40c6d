"""Locating the native programs that `make` builds (takt-run, benchmark binaries)."""

from __future__ import annotations

import os
from pathlib import Path


class NativeMissing(RuntimeError):
    """A native program is not built."""


def repo_root() -> Path:
    """The source tree this package lives in (python/takt/ -> repository root)."""
    return Path(__file__).resolve().parent.parent.parent


def build_dir() -> Path:
    """TAKT_BUILD_DIR if set, else the release build `make` produces."""
    env = os.environ.get("TAKT_BUILD_DIR")
    return Path(env) if env else repo_root() / "build" / "release"


def program(relpath: str) -> Path:
    """Path of a native program under the build directory, or NativeMissing naming the fix."""
    path = build_dir() / relpath
    if not path.is_file() or not os.access(path, os.X_OK):
        raise NativeMissing(f"{path} is not built: run `make` in {repo_root()} (or set TAKT_BUILD_DIR)")
    return path
